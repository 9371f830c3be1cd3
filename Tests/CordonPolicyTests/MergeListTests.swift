import CordonPolicy
import Testing

@Suite("Merge: lists and managed apps")
struct MergeListTests {
    typealias F = MergeFixtures

    @Test func allowListsIntersectAndAnAbsentListRestrictsNothing() {
        let first = F.documents(DocumentsSection(allowedTargets: ["a", "b"], allowedSources: ["x"]))
        let second = F.documents(DocumentsSection(allowedTargets: ["b", "c"]))
        let policy = F.merge((first, F.admin), (second, F.team), (F.pasteboard(.any), F.user))
        #expect(policy.base.documents.allowedTargets.value == ["b"])
        #expect(
            policy.base.documents.allowedTargets.rules == [
                F.rule(F.admin, "/documents/allowedTargets"), F.rule(F.team, "/documents/allowedTargets"),
            ])
        #expect(policy.base.documents.allowedSources.value == ["x"])
        #expect(F.merge((F.pasteboard(.any), F.admin)).base.documents.allowedTargets.value == nil)
    }

    @Test func anEmptyAllowListAllowsNothingAndStaysEmpty() {
        let empty = F.documents(DocumentsSection(allowedTargets: []))
        let listed = F.documents(DocumentsSection(allowedTargets: ["a"]))
        let policy = F.merge((listed, F.admin), (empty, F.user))
        #expect(policy.base.documents.allowedTargets.value == Set<String>())
    }

    @Test func saveLocationsKeepOneClausePerDocument() {
        let first = F.documents(DocumentsSection(saveLocations: ["/home/*/Documents/**", "/srv/**"]))
        let second = F.documents(DocumentsSection(saveLocations: ["/home/ada/**"]))
        let policy = F.merge((first, F.admin), (second, F.user), (first, F.team))
        let clauses = policy.base.documents.saveLocations.value?.clauses
        #expect(clauses == [["/home/*/Documents/**", "/srv/**"], ["/home/ada/**"]])
        #expect(policy.base.documents.saveLocations.rules.count == 3)
        #expect(
            policy.base.documents.saveLocations.value?.policyDescription
                == #"["/home/*/Documents/**", "/srv/**"] and ["/home/ada/**"]"#)
    }

    @Test func blockedTypesUniteNormalized() {
        let first = F.documents(DocumentsSection(blockedTypes: [".EXE ", "image/*"]))
        let second = F.documents(DocumentsSection(blockedTypes: [".exe", "Application/PDF", "  "]))
        let policy = F.merge((first, F.admin), (second, F.user))
        #expect(policy.base.documents.blockedTypes.value == [".exe", "image/*", "application/pdf"])
        #expect(policy.base.documents.blockedTypes.rules.count == 2)
    }

    @Test func managedAppsUniteAndOneIdIntersects() {
        let first = PolicyDocument(
            apps: AppsSection(managed: [
                ManagedApp(id: "notes", executables: ["/usr/bin/notes", "/opt/notes/bin/notes"]),
                ManagedApp(id: "mail", executables: ["/usr/bin/mail"], sha256: ["AA", "bb"]),
            ]))
        let second = PolicyDocument(
            apps: AppsSection(managed: [
                ManagedApp(id: "notes", executables: ["/opt/notes/bin/notes"], sha256: ["cc"]),
                ManagedApp(id: "mail", executables: ["/usr/bin/mail"], sha256: ["aa"]),
            ]))
        let policy = F.merge((first, F.admin), (second, F.team))
        let notes = policy.apps.managed["notes"]
        #expect(notes?.value.executables == ["/opt/notes/bin/notes"])
        #expect(notes?.value.sha256 == ["cc"], "no digest list is no restriction")
        #expect(notes?.rules == [F.rule(F.admin, "/apps/managed/0"), F.rule(F.team, "/apps/managed/0")])
        #expect(policy.apps.managed["mail"]?.value.sha256 == ["aa"], "digests are lower-cased, then intersect")
        #expect(policy.apps.managed["mail"]?.rules.last == F.rule(F.team, "/apps/managed/1"))
    }

    @Test func disjointDigestListsAllowNoDigest() {
        let first = PolicyDocument(
            apps: AppsSection(managed: [ManagedApp(id: "n", executables: ["/n"], sha256: ["aa"])]))
        let second = PolicyDocument(
            apps: AppsSection(managed: [ManagedApp(id: "n", executables: ["/n"], sha256: ["bb"])]))
        let policy = F.merge((first, F.admin), (second, F.team))
        #expect(policy.apps.managed["n"]?.value.sha256 == Set<String>())
    }

    @Test func userDocumentsCannotAddManagedAppsButCanRefuseUnknownOnes() {
        let user = PolicyDocument(
            apps: AppsSection(managed: [ManagedApp(id: "evil", executables: ["/tmp/evil"])], unknown: .refuse))
        let policy = F.merge((F.defaults, F.builtin), (user, F.user))
        #expect(policy.apps.managed.isEmpty)
        #expect(policy.apps.unknown.value == .refuse)
        #expect(policy.apps.unknown.rules == [F.rule(F.user, "/apps/unknown")])
    }

    @Test func overridesApplyPerAppAndOnlyTighten() {
        let base = F.pasteboard(.managed, maxChars: 1000)
        let override = PolicyDocument(overrides: [
            PolicyOverride(apps: ["notes"], pasteboard: PasteboardSection(copyOut: .any, maxChars: 100)),
            PolicyOverride(apps: ["notes", "mail"], documents: DocumentsSection(sendTo: ShareScope.none)),
        ])
        let policy = F.merge((base, F.admin), (override, F.team))
        let notes = policy.forApp("notes")
        #expect(notes.pasteboard.copyOut.value == .managed, "an override cannot loosen the base")
        #expect(notes.pasteboard.maxChars.value == 100)
        #expect(notes.pasteboard.maxChars.rules == [F.rule(F.team, "/overrides/0/pasteboard/maxChars")])
        #expect(notes.documents.sendTo.value == .none)
        #expect(notes.documents.sendTo.rules == [F.rule(F.team, "/overrides/1/documents/sendTo")])
        #expect(policy.forApp("mail").documents.sendTo.value == .none)
        #expect(policy.forApp("mail").pasteboard.maxChars.value == 1000)
        #expect(policy.forApp("other") == policy.base)
        #expect(policy.overriddenApps == ["mail", "notes"])
    }

    @Test func overridesOfSeveralDocumentsForOneAppMerge() {
        let first = PolicyDocument(overrides: [PolicyOverride(apps: ["notes"], lock: LockSection(ackDeadlineMs: 900))])
        let second = PolicyDocument(overrides: [PolicyOverride(apps: ["notes"], lock: LockSection(ackDeadlineMs: 300))])
        let policy = F.merge((F.defaults, F.builtin), (first, F.admin), (second, F.user))
        #expect(policy.forApp("notes").lock.ackDeadlineMs.value == 300)
        #expect(policy.forApp("notes").lock.ackDeadlineMs.candidates.count == 3)
        #expect(policy.base.lock.ackDeadlineMs.value == 2000)
    }

    @Test func theVersionHashIgnoresDocumentOrderAndProvenance() {
        let first = F.pasteboard(.managed)
        let second = F.documents(DocumentsSection(allowedTargets: ["a"]))
        let forward = F.merge((F.defaults, F.builtin), (first, F.admin), (second, F.team))
        let backward = F.merge((second, F.team), (first, F.admin), (F.defaults, F.builtin))
        #expect(forward.versionHash == backward.versionHash)
        #expect(forward.versionHash.count == 16)
        #expect(forward.versionHash.allSatisfy { $0.isHexDigit })
        let moved = F.merge((F.defaults, F.builtin), (first, F.user), (second, F.team))
        #expect(moved.versionHash == forward.versionHash, "moving a rule to another file keeps the values")
        let tighter = F.merge((F.defaults, F.builtin), (F.pasteboard(.blocked), F.admin), (second, F.team))
        #expect(tighter.versionHash != forward.versionHash)
        #expect(PolicyEvaluator(forward).versionHash == forward.versionHash)
    }

    @Test func theVersionHashSeesOverrides() {
        let plain = F.merge((F.defaults, F.builtin))
        let overridden = F.merge(
            (F.defaults, F.builtin),
            (
                PolicyDocument(overrides: [
                    PolicyOverride(apps: ["n"], pasteboard: PasteboardSection(copyOut: .blocked))
                ]), F.admin
            ))
        #expect(plain.versionHash != overridden.versionHash)
    }
}
