import CordonPolicy
import CordonSecrets
import NIOCore
import NIOPosix
import Testing

@testable import CordonServer

/// `GetStatus` reads a TPM-sealed key's state through one `ProtectionReader`: calls that arrive
/// while a read runs share it, so a client asking in a loop starts one TPM read at a time.
@Suite struct ProtectionReaderTests {
    @Test func callsWhileAReadRunsShareItAndTheNextStartsAnew() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        // The reader lives on the loop, as the vault's does.
        let reader = try loop.submit { NIOLoopBound(ProtectionReader(), eventLoop: loop) }.wait()
        defer { try? loop.submit { reader.value.shutdown() }.wait() }
        // Nothing listens on port 1: the read ends with the TPM's problem, quickly.
        let sealing = KeySealing(
            custody: KeyCustody(), tcti: "swtpm:host=127.0.0.1,port=1", hardware: .preferred, pcrs: [])
        let wrapped = WrappedKey(
            kdf: KDFParameters(rounds: 2, blockSize: 1, parallelism: 1, salt: Array(0..<16)), sealed: [1],
            protection: .tpm, hardware: HardwareSeal(publicBlob: [1], privateBlob: [2], pcrs: []))
        let (first, second) = try loop.submit {
            (
                reader.value.read(sealing, wrapped, warning: nil, on: loop),
                reader.value.read(sealing, wrapped, warning: nil, on: loop)
            )
        }.wait()
        #expect(first === second)
        let status = try first.wait()
        #expect(status?.problem?.contains("no TPM") == true, "\(String(describing: status))")
        // Once it ended, the next call reads again (a change is seen at the next status).
        let third = try loop.submit { reader.value.read(sealing, wrapped, warning: nil, on: loop) }.wait()
        #expect(third !== first)
        _ = try third.wait()
    }
}
