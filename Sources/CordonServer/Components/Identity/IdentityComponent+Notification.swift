import CordonIdentity
import CordonSystem
import NIOCore
import NIOPosix

/// The device code as a desktop notification (docs/ARCHITECTURE.md, "Identity"): an app's
/// `GetToken` may start a sign-in when no terminal is watching, so the code the user must enter
/// goes to the session bus's notification server as well as to `cordon login`. The notification
/// is withdrawn when the flight ends. Where there is no session bus or no notification server,
/// the agent logs that and the terminal remains the way.
extension IdentityComponent {
    /// Shows `prompt` off the loop and withdraws it when `flight` ends.
    /// An agent without buses (`lockTriggers` nil, as in-process tests run it) shows nothing.
    func notifyUserCode(_ flight: IdentityFlight, _ prompt: DeviceCodePrompt) {
        guard let buses = host.configuration.lockTriggers else { return }
        let notifier = DesktopNotifier(address: buses.session ?? "")
        let (summary, body) = Self.notificationText(prompt)
        let seconds = max(1, prompt.expiresAt - host.clock())
        let expire = Int32(min(seconds * 1000, Double(Int32.max)))
        let logger = host.logger
        let shown = NIOThreadPool.singleton.runIfActive(eventLoop: host.loop) {
            try notifier.show(summary: summary, body: body, expireMilliseconds: expire)
        }
        shown.whenFailure { error in
            logger.info(
                "the sign-in code is not shown as a desktop notification",
                metadata: ["provider": "\(prompt.provider)", "reason": "\(error)"])
        }
        let flightLoop = flight.future.eventLoop
        shown.and(flight.future.map { _ in () }.recover { _ in () }).whenSuccess { id, _ in
            _ = NIOThreadPool.singleton.runIfActive(eventLoop: flightLoop) { try notifier.close(id) }
        }
    }

    /// The notification's summary and body: where to go and the code to enter (never a token).
    static func notificationText(_ prompt: DeviceCodePrompt) -> (summary: String, body: String) {
        let summary = "Sign in to \(prompt.provider)"
        var body = "Enter the code \(prompt.userCode) at \(prompt.verificationURI)"
        if let complete = prompt.verificationURIComplete { body += " (or open \(complete))" }
        return (summary, body + ". Cordon signs your apps in once you have.")
    }
}
