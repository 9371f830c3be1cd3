import CordonLifecycle
import CordonProtocol

extension Agent {
    /// `GetNetworkPolicy`: the registered app's effective `network` policy from the policy in
    /// force now (docs/ARCHITECTURE.md, "Pinned channel"). Any registration may ask (managed or
    /// not, own or on a child's behalf: `cordon run --tunnel` enforces it for its program); a
    /// connection that registered nothing, and a token of another process, get `NotRegistered`
    /// and `InvalidToken` (docs/THREAT-MODEL.md).
    func networkPolicy(token: String?, caller: AgentConnection) throws(CordonError) -> NetworkPolicy {
        var connection = caller
        if let token {
            guard let owner = registry.connection(token: token, pid: Int(caller.identity.pid)),
                let registered = connections[owner]
            else { throw .invalidToken }
            connection = registered
        }
        guard let registration = registry.registrations[connection.id], let process = processes[connection.id]
        else { throw .notRegistered }
        if let pidfd = process.pidfd, !pidfd.isAlive {
            throw .processChanged(appId: registration.appId, reason: "the process has exited")
        }
        return policy.networkPolicy(appId: registration.appId)
    }
}
