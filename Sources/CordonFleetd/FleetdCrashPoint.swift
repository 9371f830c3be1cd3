import Foundation

/// Where the crash tests stop fleetd as a kill -9 would (`CORDON_FLEETD_CRASH_AT=<point>`): right
/// after a command is handed on, or right before the state is saved. Only root sets fleetd's
/// environment (it is a system service), and the point only ever ends the process early, which a
/// power cut can do too; the tests show nothing is skipped or repeated when it happens.
enum FleetdCrashPoint: String {
    case handedOn
    case beforeSave

    static let chosen = ProcessInfo.processInfo.environment["CORDON_FLEETD_CRASH_AT"].flatMap(
        FleetdCrashPoint.init(rawValue:))

    static func reached(_ point: FleetdCrashPoint) {
        if chosen == point { _exit(137) }
    }
}
