import CordonProtocol
import Testing

@testable import CordonSecrets

@Suite("ManagedPasteboard: sealed content, truncation, clearing")
struct ManagedPasteboardTests {
    let source = ManagedPasteboard.Source(appId: "com.example.notes", managed: true)

    @Test func copyThenPasteReturnsTheContentAndItsSource() throws {
        var pasteboard = ManagedPasteboard()
        #expect(pasteboard.isEmpty)
        #expect(try pasteboard.copy("héllo wörld", mimeType: "text/plain", source: source, truncateTo: nil) == nil)
        #expect(pasteboard.summary?.characters == 11)
        let clipping = try #require(try pasteboard.paste(truncateTo: nil))
        #expect(clipping.content == "héllo wörld")
        #expect(clipping.mimeType == "text/plain")
        #expect(clipping.source == source)
    }

    @Test func truncationCountsCharactersNotBytes() throws {
        var pasteboard = ManagedPasteboard()
        #expect(try pasteboard.copy("ééééé", mimeType: "text/plain", source: source, truncateTo: 3) == 3)
        #expect(try pasteboard.paste(truncateTo: nil)?.content == "ééé")
        #expect(try pasteboard.paste(truncateTo: 2)?.content == "éé")
        #expect(try pasteboard.copy("ab", mimeType: "text/plain", source: source, truncateTo: 3) == nil)
    }

    @Test func oversizedContentIsRefusedAndKeepsThePreviousClipping() throws {
        var pasteboard = ManagedPasteboard()
        _ = try pasteboard.copy("kept", mimeType: "text/plain", source: source, truncateTo: nil)
        let large = String(repeating: "x", count: ManagedPasteboard.maxBytes + 1)
        #expect(throws: CordonError.contentTooLarge(limit: ManagedPasteboard.maxBytes)) {
            _ = try pasteboard.copy(large, mimeType: "text/plain", source: source, truncateTo: nil)
        }
        #expect(try pasteboard.paste(truncateTo: nil)?.content == "kept")
    }

    @Test func clearAndKeyRotationEmptyIt() throws {
        var pasteboard = ManagedPasteboard()
        _ = try pasteboard.copy("one", mimeType: "text/plain", source: source, truncateTo: nil)
        pasteboard.clear()
        #expect(try pasteboard.paste(truncateTo: nil) == nil)
        _ = try pasteboard.copy("two", mimeType: "text/plain", source: source, truncateTo: nil)
        pasteboard.rotateKey()
        #expect(pasteboard.isEmpty)
        _ = try pasteboard.copy("three", mimeType: "text/plain", source: source, truncateTo: nil)
        #expect(try pasteboard.paste(truncateTo: nil)?.content == "three")
    }

    /// Whether every byte of `storage` is zero.
    func allZero(_ storage: SecureBytes) -> Bool { storage.withUnsafeBytes { $0.allSatisfy { $0 == 0 } } }

    @Test func clearingZeroesTheStoredSealedBytesNotACopy() throws {
        var pasteboard = ManagedPasteboard()
        _ = try pasteboard.copy("secret clipping", mimeType: "text/plain", source: source, truncateTo: nil)
        let storage = try #require(pasteboard.sealedStorage)
        #expect(!allZero(storage))
        // Another copy of the value shares the storage, as a copy-on-write `Data` would have.
        let snapshot = pasteboard
        pasteboard.clear()
        #expect(storage.isZeroed)
        #expect(allZero(storage), "the bytes themselves are zero, not those of a copy")
        #expect(snapshot.sealedStorage === storage)
    }

    @Test func replacingAClippingZeroesThePreviousOne() throws {
        var pasteboard = ManagedPasteboard()
        _ = try pasteboard.copy("first", mimeType: "text/plain", source: source, truncateTo: nil)
        let first = try #require(pasteboard.sealedStorage)
        _ = try pasteboard.copy("second", mimeType: "text/plain", source: source, truncateTo: nil)
        #expect(allZero(first))
        #expect(try pasteboard.paste(truncateTo: nil)?.content == "second")
    }

    @Test func rotatingTheKeyZeroesTheSealedBytes() throws {
        var pasteboard = ManagedPasteboard()
        _ = try pasteboard.copy("before revocation", mimeType: "text/plain", source: source, truncateTo: nil)
        let storage = try #require(pasteboard.sealedStorage)
        pasteboard.rotateKey()
        #expect(allZero(storage))
        #expect(pasteboard.sealedStorage == nil)
    }
}
