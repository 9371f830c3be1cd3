import Foundation

/// The Secret Service peers `cordon-bench rtt` measures Storage.Get against, each on its own
/// private bus, and the calls measured on them with the ratios the issue sets (#31):
/// Storage.Get ÷ gnome-keyring's GetSecret by path <= 0.3x, Storage.Get ÷ a libsecret-style
/// lookup <= 0.1x; KeePassXC's GetSecret by path for information.
final class SecretServicePeers {
    static let getSecretName = "gnome-keyring GetSecret by path"
    static let lookupName = "gnome-keyring lookup (Search+GetSecrets, DH)"
    static let keepassName = "KeePassXC GetSecret by path"

    /// Every measured call and its target, in the order they are measured.
    static let targets = [
        SecretServiceTarget(name: getSecretName, target: 0.3),
        SecretServiceTarget(name: lookupName, target: 0.1),
        SecretServiceTarget(name: keepassName, target: nil),
    ]

    let gnomeKeyring: SecretServicePeer
    /// Nil when KeePassXC could not be set up (`keepassSkipped` says why).
    let keepassXC: SecretServicePeer?
    let keepassSkipped: String?

    /// Starts gnome-keyring (required) and KeePassXC (skipped with the reason when it fails).
    init(
        directory: String, value: [UInt8], busExecutable: String, keyring: String, keepassxc: String, keepassCLI: String
    )
        throws
    {
        gnomeKeyring = try .gnomeKeyring(
            directory: directory + "/gnome-keyring", value: value, busExecutable: busExecutable, executable: keyring)
        do {
            keepassXC = try .keepassXC(
                directory: directory + "/keepassxc", value: value, busExecutable: busExecutable, executable: keepassxc,
                cli: keepassCLI)
            keepassSkipped = nil
        } catch {
            keepassXC = nil
            keepassSkipped = "\(error)"
        }
    }

    /// The measured calls.
    var sides: [SecretServiceComparison.Side] {
        let keyring = gnomeKeyring
        var sides: [SecretServiceComparison.Side] = [
            .init(name: Self.getSecretName, target: 0.3, pids: keyring.pids) { try keyring.getByPath() },
            .init(name: Self.lookupName, target: 0.1, pids: keyring.pids) { try keyring.lookup() },
        ]
        if let keepass = keepassXC {
            sides.append(.init(name: Self.keepassName, target: nil, pids: keepass.pids) { try keepass.getByPath() })
        }
        return sides
    }

    func stop() {
        gnomeKeyring.stop()
        keepassXC?.stop()
    }
}
