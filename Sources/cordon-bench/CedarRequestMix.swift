import CordonPolicy
import CordonProtocol

/// The requests both engines decide in the Cedar comparison: every combination of acting app,
/// peer, content type and save location that exercises a policy's pasteboard and document rules.
///
/// The apps are the policy's first three managed apps plus one unmanaged outsider; a nil peer
/// stands for an unmanaged client or the system. Lengths stay below every example's `maxChars`
/// (Cedar has no obligations: only allow or deny is compared).
enum CedarRequestMix {
    static let outsider = AppFacts(id: "org.other.chat", managed: false)

    /// Content types for sends and receives: allowed, MIME-blocked, extension-blocked, per-app
    /// blocked (certificates in the corporate baseline's mail app) and an `image/*` type.
    static let contentTypes = [
        "application/pdf", "image/png", "application/x-msdownload", "installer.exe", "cert.p12", "application/x-sh",
    ]

    /// Save locations: inside and outside the examples' `saveLocations` (with the case and the
    /// one-segment `*` mattering), blocked extensions, and none at all.
    static let locations: [String?] = [
        "/home/u/Documents/Work/report.pdf", "/home/u/Documents/work/report.pdf",
        "/home/u/x/Documents/Work/report.pdf", "/home/u/Documents/Work/q3/plan.pdf",
        "/srv/share/corporate/q3/plan.pdf", "/tmp/report.pdf", "/home/u/Documents/Work/setup.exe",
        "/home/u/Documents/Work/cert.p12", nil,
    ]

    static let saveContentTypes: [String?] = ["application/pdf", "application/x-msdownload", nil]

    /// The mix for a policy whose managed apps are `managedIds`.
    static func requests(managedIds: [String]) -> [DecisionRequest] {
        let apps = managedIds.prefix(3).map { AppFacts(id: $0, managed: true) } + [outsider]
        let peers: [AppFacts?] = apps + [nil]
        var requests: [DecisionRequest] = []
        for app in apps {
            requests.append(DecisionRequest(action: .pasteboardCopy, app: app, length: 120))
        }
        for app in apps {
            for peer in peers {
                requests.append(DecisionRequest(action: .pasteboardPaste, app: app, peer: peer, length: 120))
            }
        }
        for action in [PolicyAction.documentSend, .documentReceive] {
            for app in apps {
                for peer in peers {
                    for contentType in contentTypes {
                        requests.append(DecisionRequest(action: action, app: app, peer: peer, contentType: contentType))
                    }
                }
            }
        }
        for app in apps {
            for location in locations {
                for contentType in saveContentTypes {
                    requests.append(
                        DecisionRequest(action: .documentSave, app: app, location: location, contentType: contentType))
                }
            }
        }
        return requests
    }
}
