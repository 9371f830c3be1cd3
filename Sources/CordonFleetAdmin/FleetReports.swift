import CordonFleet
import CordonNATS
import Foundation

/// The fleet's compliance view as the push channel keeps it (docs/FLEET.md, "Push"): the last
/// signed report of every machine, read from the reports stream with the workspace's NATS key and
/// each verified here. The server is not trusted: a report that is not signed by the device key
/// of the machine whose subject it came on is shown as refused, never as that machine's.
public enum FleetReports {
    /// One machine's entry: its device id (from the subject) and its verified report, or why the
    /// message kept for it is not one.
    public struct Entry: Sendable {
        public var device: String
        public var report: FleetReport?
        public var refusal: String?
    }

    /// The kept report of every machine (or of `device` only), sorted by device id.
    public static func read(
        workspace: String, servers: [String], seedFile: String?, caFile: String?, device: String? = nil,
        timeout: Double = 5
    ) throws(FleetAdminError) -> [Entry] {
        guard !servers.isEmpty else {
            throw FleetAdminError(.usage, "no NATS server given", hint: "pass --nats tls://HOST:4222")
        }
        var options = try FleetRing.options(
            seedFile: seedFile ?? FleetRing.keyPath(workspace: workspace), servers: servers)
        options.caFile = caFile
        options.name = "cordon fleet reports"
        let prefix = FleetPushedCommands.reportSubject(for: "")
        do {
            let connection = try NATSConnection(options)
            defer { connection.close() }
            let subjects = try connection.subjects(
                stream: FleetPushedCommands.reportStream,
                filter: device.map(FleetPushedCommands.reportSubject(for:)) ?? FleetPushedCommands.reportSubjects,
                timeout: timeout)
            var entries: [Entry] = []
            for subject in subjects.keys.sorted() where subject.hasPrefix(prefix) {
                let id = String(subject.dropFirst(prefix.count))
                guard
                    let kept = try connection.lastMessage(
                        stream: FleetPushedCommands.reportStream, subject: subject, timeout: timeout)
                else { continue }
                do {
                    entries.append(Entry(device: id, report: try FleetReport.verify(kept.data, device: id)))
                } catch {
                    entries.append(Entry(device: id, refusal: "\(error)"))
                }
            }
            return entries
        } catch  where error.jetStreamCode == 10059 {
            throw FleetAdminError(
                .io, "the NATS server has no stream \(FleetPushedCommands.reportStream)",
                hint: "run `cordon fleet ring` once: it makes the streams")
        } catch {
            throw FleetAdminError(
                .io, "reading reports from \(servers.joined(separator: ", ")): \(error)",
                hint: "check the URL and that the server lists this workspace's NKey (`cordon fleet push-key`)")
        }
    }
}
