import CordonKit
import Foundation

/// Notes kept in the app's `SecureStore`: one record per note, sealed under a key derived from
/// the app key by CordonKit, which also closes the store the moment the key is revoked.
/// While closed the app writes nothing.
actor NoteStore {
    private let app: CordonApp
    private let store: SecureStore
    private var open = false
    private var written = 0
    /// Why the last write failed, until one succeeds.
    private(set) var failure: String?

    init(app: CordonApp, dataDirectory: String?) throws {
        self.app = app
        store = try SecureStore(app: app, namespace: "notes", dataDirectory: dataDirectory)
    }

    var isOpen: Bool { open }

    /// Opens the notes (fetching the key) and returns how many existing notes decrypt.
    func open() async throws -> Int {
        var readable = 0
        for name in try await store.list(prefix: "note-") where (try? await store.get(name)) != nil {
            readable += 1
        }
        written = readable
        open = true
        return readable
    }

    /// Stores `note` as the next record; returns its number, or nil while closed or refused.
    func append(_ note: String) async -> Int? {
        guard open else { return nil }
        let number = written + 1
        do {
            try await store.put(String(format: "note-%06d", number), Data(note.utf8))
        } catch {
            failure = "\(error)"
            return nil
        }
        failure = nil
        written = number
        return written
    }

    /// Stops writing (CordonKit has already zeroed the key on revocation).
    func close() {
        open = false
    }
}
