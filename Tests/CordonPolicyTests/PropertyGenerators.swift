import CordonPolicy
import CordonProtocol
import PropertyBased

/// Random policy documents over every section, requests and registrations, drawn from small pools
/// so that documents, overrides and requests name the same apps, types and paths.
enum PropertyGenerators {
    typealias RNG = any SeededRandomNumberGenerator

    static let appIds = ["com.example.notes", "com.example.mail", "org.example.browser", "org.example.game"]
    static let executables = ["/usr/bin/notes", "/usr/bin/mail", "/opt/notes/notes"]
    static let digests = ["aa", "bb", "cc"]
    static let blockedTypes = ["application/pdf", "image/*", ".exe", "EXE", ".tar.gz", "*/*", "text/plain"]
    static let contentTypes = ["application/pdf", "image/png", "setup.exe", "backup.tar.gz", "text/plain", "notes.txt"]
    static let globs = ["/home/*/Documents/**", "/home/ada/**", "/srv/share/r?.csv", "/tmp/*", "**/*.txt"]
    static let locations = [
        "/home/ada/Documents/a.txt", "/home/bob/Documents/x/y.pdf", "/srv/share/r1.csv", "/tmp/a.exe", "/tmp/x/y.txt",
    ]
    static let sources = [
        PolicySource(path: "<builtin>", origin: .builtin),
        PolicySource(path: "/etc/cordon/policy.d/a.json", origin: .admin),
        PolicySource(path: "/etc/cordon/policy.d/b.json", origin: .admin),
        PolicySource(path: "/home/ada/.config/cordon/policy.d/u.json", origin: .user),
    ]

    /// A random document with a random source.
    static let document = Generator<(PolicyDocument, PolicySource), Shrink.None<(PolicyDocument, PolicySource)>>(
        run: { rng in (randomDocument(&rng), pick(sources, &rng)) }, shrink: { _ in Shrink.None() })

    /// A random user document (it cannot make apps managed).
    static let userDocument = Generator<(PolicyDocument, PolicySource), Shrink.None<(PolicyDocument, PolicySource)>>(
        run: { rng in (randomDocument(&rng), PolicySource(path: "/home/ada/u2.json", origin: .user)) },
        shrink: { _ in Shrink.None() })

    /// One to three random documents, sometimes with the default first.
    static let documents = Generator<[(PolicyDocument, PolicySource)], Shrink.None<[(PolicyDocument, PolicySource)]>>(
        run: { rng in
            var documents = (0..<Int.random(in: 1...3, using: &rng)).map { _ in
                (randomDocument(&rng), pick(sources, &rng))
            }
            if Bool.random(using: &rng) { documents.insert((MergeFixtures.defaults, MergeFixtures.builtin), at: 0) }
            return documents
        }, shrink: { _ in Shrink.None() })

    /// Thirty random requests of every action but `app.register`.
    static let requests = Generator<[DecisionRequest], Shrink.None<[DecisionRequest]>>(
        run: { rng in (0..<30).map { _ in randomRequest(&rng) } }, shrink: { _ in Shrink.None() })

    /// Ten random registrations.
    static let registrations = Generator<[RegistrationFacts], Shrink.None<[RegistrationFacts]>>(
        run: { rng in
            (0..<10).map { _ in
                RegistrationFacts(
                    appId: pick(appIds, &rng), executable: pick(executables, &rng),
                    sha256: maybe(&rng) { pick(digests, &$0) },
                    debuggerAttached: Bool.random(using: &rng), preloadInjected: Bool.random(using: &rng))
            }
        }, shrink: { _ in Shrink.None() })

    static func pick<Element>(_ items: [Element], _ rng: inout RNG) -> Element {
        items[Int.random(in: 0..<items.count, using: &rng)]
    }

    /// A value two times in three (so that nested optional keys are set often enough to collide).
    static func maybe<Value>(_ rng: inout RNG, _ make: (inout RNG) -> Value) -> Value? {
        Int.random(in: 0..<3, using: &rng) == 0 ? nil : make(&rng)
    }

    static func subset(_ items: [String], _ rng: inout RNG) -> [String] {
        items.filter { _ in Int.random(in: 0..<3, using: &rng) == 0 }
    }

    static func enumCase<Value: CaseIterable>(_ rng: inout RNG) -> Value? where Value.AllCases == [Value] {
        maybe(&rng) { pick(Value.allCases, &$0) }
    }

    static func randomRequest(_ rng: inout RNG) -> DecisionRequest {
        let actions: [PolicyAction] = [
            .pasteboardCopy, .pasteboardPaste, .documentSend, .documentReceive, .documentSave,
        ]
        let app = AppFacts(id: pick(appIds, &rng), managed: Bool.random(using: &rng))
        let peer = maybe(&rng) { AppFacts(id: pick(appIds, &$0), managed: Bool.random(using: &$0)) }
        return DecisionRequest(
            action: pick(actions, &rng), app: app, peer: peer, location: maybe(&rng) { pick(locations, &$0) },
            contentType: maybe(&rng) { pick(contentTypes, &$0) }, length: maybe(&rng) { pick([5, 50, 500, 5000], &$0) })
    }

    typealias K = PolicyKeys
    typealias Entries = [PolicySettingEntry?]

    static func randomDocument(_ rng: inout RNG) -> PolicyDocument {
        let apps: Entries? = maybe(&rng) { rng in
            let managed = maybe(&rng) { rng in
                (0..<Int.random(in: 0...2, using: &rng)).map { _ in
                    ManagedApp(
                        id: pick(appIds, &rng), executables: subset(executables, &rng), sha256: subset(digests, &rng))
                }
            }
            return [K.Apps.managed(ifSet: managed), K.Apps.unknown(ifSet: enumCase(&rng))]
        }
        let passcode: Entries? = maybe(&rng) { rng in
            [
                K.Passcode.minLength(ifSet: maybe(&rng) { Int.random(in: 0...12, using: &$0) }),
                K.Passcode.kind(ifSet: enumCase(&rng)),
                K.Passcode.allowSimple(ifSet: maybe(&rng) { Bool.random(using: &$0) }),
                K.Passcode.maxAttempts(ifSet: maybe(&rng) { Int.random(in: 1...20, using: &$0) }),
                K.Passcode.onMaxAttempts(ifSet: enumCase(&rng)),
            ]
        }
        var overrides: [PolicyOverride] = []
        for _ in 0..<Int.random(in: 0...2, using: &rng) {
            var listed = subset(appIds, &rng)
            if listed.isEmpty { listed = [pick(appIds, &rng)] }
            overrides.append(PolicyOverride(apps: listed, settings: PolicySettingValues(randomSections(&rng))))
        }
        let entries = (apps ?? []) + (passcode ?? []) + randomSections(&rng)
        return PolicyDocument(settings: PolicySettingValues(entries), overrides: overrides)
    }

    /// The sections an override may also hold, each present or not.
    static func randomSections(_ rng: inout RNG) -> Entries {
        var entries: Entries = []
        for section in [randomLock, randomPasteboard, randomDocuments, randomStorage, randomConditions] {
            entries += maybe(&rng, section) ?? []
        }
        return entries
    }

    static func randomLock(_ rng: inout RNG) -> Entries {
        [
            K.Lock.idleTimeoutSeconds(ifSet: maybe(&rng) { pick([0, 60, 300, 900], &$0) }),
            K.Lock.onScreenLock(ifSet: maybe(&rng) { Bool.random(using: &$0) }),
            K.Lock.onSuspend(ifSet: maybe(&rng) { Bool.random(using: &$0) }),
            K.Lock.reauthGraceSeconds(ifSet: maybe(&rng) { pick([0, 30, 60, 600], &$0) }),
            K.Lock.discardKeyOnLock(ifSet: maybe(&rng) { Bool.random(using: &$0) }),
            K.Lock.ackDeadlineMs(ifSet: maybe(&rng) { pick([100, 500, 2000], &$0) }),
            K.Lock.onAckTimeout(ifSet: enumCase(&rng)),
        ]
    }

    static func randomPasteboard(_ rng: inout RNG) -> Entries {
        [
            K.Pasteboard.copyOut(ifSet: enumCase(&rng)),
            K.Pasteboard.maxChars(ifSet: maybe(&rng) { pick([10, 100, 1000], &$0) }),
            K.Pasteboard.clearOnLock(ifSet: maybe(&rng) { Bool.random(using: &$0) }),
        ]
    }

    static func randomDocuments(_ rng: inout RNG) -> Entries {
        [
            K.Documents.sendTo(ifSet: enumCase(&rng)), K.Documents.receiveFrom(ifSet: enumCase(&rng)),
            K.Documents.allowedTargets(ifSet: maybe(&rng) { subset(appIds, &$0) }),
            K.Documents.allowedSources(ifSet: maybe(&rng) { subset(appIds, &$0) }),
            K.Documents.saveCopies(ifSet: enumCase(&rng)),
            K.Documents.saveLocations(ifSet: maybe(&rng) { subset(globs, &$0) }),
            K.Documents.blockedTypes(ifSet: maybe(&rng) { subset(blockedTypes, &$0) }),
        ]
    }

    static func randomStorage(_ rng: inout RNG) -> Entries {
        [K.Storage.dataAccess(ifSet: enumCase(&rng))]
    }

    static func randomConditions(_ rng: inout RNG) -> Entries {
        [
            K.Conditions.debuggerAttached(ifSet: enumCase(&rng)), K.Conditions.preloadInjected(ifSet: enumCase(&rng)),
            K.Conditions.executableMismatch(ifSet: enumCase(&rng)),
        ]
    }
}
