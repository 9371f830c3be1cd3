import CordonFleet
import Foundation

/// The network half of a poll, shared by fleetd and the fleet simulation (`cordon-bench fleet-poll`):
/// the conditional timestamp, the TUF refresh fed from HTTPS, and a target's download, verified.
public struct RepositoryPoll: Sendable {
    /// Why a download gave nothing.
    public enum DownloadFailure: Error, Sendable {
        /// The bytes were refused (length, hash, missing): an attack or a broken repository.
        case refused(TUFError)
        /// The transport failed.
        case unreachable(String)
    }

    let client: RepositoryClient

    public init(client: RepositoryClient) { self.client = client }

    /// One refresh of `trusted`: the timestamp first, conditionally on `etag`. When it has not
    /// changed nothing has (the admin tool re-signs it with every change), and a poll costs one
    /// request. When it has, the spec's order is kept: the root chain is verified before the
    /// timestamp that was fetched. Returns the outcome and the timestamp's ETag to keep.
    public func refresh(_ trusted: TUFTrustedSet, etag previous: String?, now: Date) async
        -> (result: TUFRefresh.Outcome, etag: String?)
    {
        var timestamp: [UInt8]?
        var etag: String?
        if trusted.timestamp != nil {
            let (reply, tag) = await client.fetch(
                "timestamp.json", maximumLength: TUFRefresh.Limits.timestamp, etag: previous)
            switch reply {
            case .notModified:
                var refresh = TUFRefresh(trusted: trusted, now: now)
                return (refresh.confirmUnchanged(), previous)
            case .data(let bytes):
                timestamp = bytes
                etag = tag
            case .notFound:
                return (
                    .refused(TUFError(.notFound, role: "timestamp", "the repository does not serve timestamp.json")),
                    nil
                )
            case .tooLong:
                return (
                    .refused(
                        TUFError(
                            .length, role: "timestamp", "timestamp.json is over \(TUFRefresh.Limits.timestamp) bytes")),
                    nil
                )
            case .failed(let reason):
                return (.refused(TUFError(.transport, role: "timestamp", reason)), nil)
            }
        }
        var refresh = TUFRefresh(trusted: trusted, now: now)
        var step = refresh.start()
        while case .fetch(let fetch) = step {
            if fetch.path == "timestamp.json", let bytes = timestamp {
                step = refresh.receive(.data(bytes))
                continue
            }
            let (reply, tag) = await client.fetch(fetch.path, maximumLength: fetch.maximumLength)
            if fetch.path == "timestamp.json" { etag = tag }
            step = refresh.receive(reply)
        }
        guard case .finished(let outcome) = step else {
            return (.refused(TUFError(.malformed, role: "refresh", "the refresh did not finish")), nil)
        }
        return (outcome, etag)
    }

    /// Downloads `file` (reading no more than its length) and verifies it.
    public func download(_ file: TUFTargetFile) async -> Result<[UInt8], DownloadFailure> {
        let (reply, _) = await client.fetch(file.servedPath, maximumLength: file.length)
        switch reply {
        case .data(let bytes):
            do {
                try file.verify(bytes)
                return .success(bytes)
            } catch {
                return .failure(.refused(error))
            }
        case .tooLong:
            return .failure(
                .refused(TUFError(.length, role: "target", "\(file.path): more than the \(file.length) bytes promised"))
            )
        case .notFound, .notModified:
            return .failure(.refused(TUFError(.notFound, role: "target", "\(file.path) (\(file.servedPath))")))
        case .failed(let reason):
            return .failure(.unreachable(reason))
        }
    }
}
