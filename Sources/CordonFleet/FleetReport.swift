import CordonProtocol
import Crypto
import Foundation

/// A machine's report to its admins (docs/FLEET.md, "Reports"): the metadata versions and policy
/// files in force, the last command taken, the last error, the machine's posture — signed by the
/// device key. The device id
/// is SHA-256 of the public key the report carries, so a report proves which machine made it.
public struct FleetReport: Sendable, Equatable {
    public var device: String
    public var publicKey: [UInt8]
    public var time: Date
    /// Trusted metadata versions by role.
    public var versions: [String: Int]
    /// Installed policy files: name → SHA-256 hex.
    public var policies: [String: String]
    /// The highest command counter taken.
    public var lastCommand: Int?
    public var lastError: String?
    /// The machine's posture checks as fleetd (root) reads them: check → status and evidence.
    public var posture: [PostureResult]

    public init(
        device: String, publicKey: [UInt8], time: Date, versions: [String: Int], policies: [String: String],
        lastCommand: Int?, lastError: String?, posture: [PostureResult] = []
    ) {
        self.device = device
        self.publicKey = publicKey
        self.time = time
        self.versions = versions
        self.policies = policies
        self.lastCommand = lastCommand
        self.lastError = lastError
        self.posture = posture
    }

    func value(withTime: Bool) -> JSONValue {
        var members: [String: JSONValue] = [
            "_type": .string("cordon-fleet-report"), "device": .string(device),
            "publicKey": .string(TUFHex.encode(publicKey)), "versions": .object(versions.mapValues(JSONValue.int)),
            "policies": .object(policies.mapValues(JSONValue.string)),
        ]
        if withTime { members["time"] = .string(TUFDate.format(time)) }
        if let lastCommand { members["lastCommand"] = .int(lastCommand) }
        if let lastError { members["lastError"] = .string(lastError) }
        if !posture.isEmpty {
            var checks: [String: JSONValue] = [:]
            for result in posture {
                checks[result.check.rawValue] = .object([
                    "status": .string(result.status.rawValue), "evidence": .string(result.evidence),
                ])
            }
            members["posture"] = .object(checks)
        }
        return .object(members)
    }

    /// SHA-256 of everything but the time: a report is sent again when this changes.
    public var contentDigest: String {
        TUFHex.encode(SHA256.hash(data: (try? CanonicalJSON.encode(value(withTime: false), role: "report")) ?? []))
    }

    /// The canonical bytes the device key signs.
    public var message: [UInt8] { (try? CanonicalJSON.encode(value(withTime: true), role: "report")) ?? [] }

    /// The report file: `{"signed": …, "signatures": [{"keyid": <device id>, "sig": <hex>}]}`.
    public func file(signature: [UInt8]) -> [UInt8] {
        let document = JSONValue.object([
            "signed": value(withTime: true),
            "signatures": .array([.object(["keyid": .string(device), "sig": .string(TUFHex.encode(signature))])]),
        ])
        return ((try? CanonicalJSON.encode(document, role: "report")) ?? []) + [UInt8(ascii: "\n")]
    }

    /// Reads and verifies a report file: the signature by the key it carries, and that key's hash is
    /// the device id (and `device`, when the admin names one).
    public static func verify(_ bytes: [UInt8], device expected: String? = nil) throws(TUFError) -> FleetReport {
        let document = try TUFFields(CanonicalJSON.parse(bytes, role: "report"), at: "", role: "report")
        let signed = try document.object("signed")
        let type = try signed.string("_type")
        guard type == "cordon-fleet-report" else {
            throw TUFError(.malformed, role: "report", "/signed/_type is \"\(type)\", not \"cordon-fleet-report\"")
        }
        let device = try signed.string("device")
        let publicKey = try signed.hex("publicKey")
        guard publicKey.count == 32, TUFHex.encode(SHA256.hash(data: publicKey)) == device else {
            throw TUFError(.threshold, role: "report", "/signed/publicKey is not the key of device \(device)")
        }
        if let expected, expected != device {
            throw TUFError(.threshold, role: "report", "the report is device \(device)'s, not \(expected)'s")
        }
        var versions: [String: Int] = [:]
        let versionFields = try signed.object("versions")
        for (role, _) in versionFields.members { versions[role] = try versionFields.integer(role) }
        var policies: [String: String] = [:]
        let policyFields = try signed.object("policies")
        for (name, _) in policyFields.members { policies[name] = try policyFields.string(name) }
        var posture: [PostureResult] = []
        if let checks = try signed.optionalObject("posture") {
            for (name, value) in checks.members {
                let fields = try TUFFields(value, at: checks.path(name), role: "report")
                let statusName = try fields.string("status")
                guard let check = PostureCheck(rawValue: name), let status = PostureStatus(rawValue: statusName) else {
                    throw TUFError(.malformed, role: "report", "\(checks.path(name)) is not a posture check and status")
                }
                posture.append(PostureResult(check, status, try fields.string("evidence")))
            }
        }
        let report = FleetReport(
            device: device, publicKey: publicKey, time: try signed.date("time"), versions: versions, policies: policies,
            lastCommand: try signed.optionalInteger("lastCommand"),
            lastError: signed.value["lastError"] == nil ? nil : try signed.string("lastError"),
            posture: posture.sorted { $0.check.rawValue < $1.check.rawValue })
        let message = try CanonicalJSON.encode(signed.value, role: "report")
        let key = TUFKey(id: device, ed25519: publicKey)
        let valid = try document.array("signatures").contains { element in
            guard let fields = try? TUFFields(element, at: "", role: "report"), let sig = try? fields.hex("sig") else {
                return false
            }
            return key.verifies(sig, over: message)
        }
        guard valid else { throw TUFError(.threshold, role: "report", "no valid signature by device \(device)'s key") }
        return report
    }
}
