import CordonPolicy
import Testing

@Suite("Merge: lists and managed apps")
struct MergeListTests {
    typealias F = MergeFixtures

    @Test func allowListsIntersectAndAnAbsentListRestrictsNothing() {
        let first = F.documents(
            PolicyKeys.Documents.allowedTargets(["a", "b"]), PolicyKeys.Documents.allowedSources(["x"]))
        let second = F.documents(PolicyKeys.Documents.allowedTargets(["b", "c"]))
        let policy = F.merge((first, F.admin), (second, F.team), (F.pasteboard(.any), F.user))
        #expect(policy.base[PolicyKeys.Documents.allowedTargets].value == ["b"])
        #expect(
            policy.base[PolicyKeys.Documents.allowedTargets].rules == [
                F.rule(F.admin, "/documents/allowedTargets"), F.rule(F.team, "/documents/allowedTargets"),
            ])
        #expect(policy.base[PolicyKeys.Documents.allowedSources].value == ["x"])
        #expect(F.merge((F.pasteboard(.any), F.admin)).base[PolicyKeys.Documents.allowedTargets].value == nil)
    }

    @Test func anEmptyAllowListAllowsNothingAndStaysEmpty() {
        let empty = F.documents(PolicyKeys.Documents.allowedTargets([]))
        let listed = F.documents(PolicyKeys.Documents.allowedTargets(["a"]))
        let policy = F.merge((listed, F.admin), (empty, F.user))
        #expect(policy.base[PolicyKeys.Documents.allowedTargets].value == Set<String>())
    }

    @Test func saveLocationsKeepOneClausePerDocument() {
        let first = F.documents(PolicyKeys.Documents.saveLocations(["/home/*/Documents/**", "/srv/**"]))
        let second = F.documents(PolicyKeys.Documents.saveLocations(["/home/ada/**"]))
        let policy = F.merge((first, F.admin), (second, F.user), (first, F.team))
        let clauses = policy.base[PolicyKeys.Documents.saveLocations].value?.clauses
        #expect(clauses == [["/home/*/Documents/**", "/srv/**"], ["/home/ada/**"]])
        #expect(policy.base[PolicyKeys.Documents.saveLocations].rules.count == 3)
        #expect(
            policy.base[PolicyKeys.Documents.saveLocations].value?.policyDescription
                == #"["/home/*/Documents/**", "/srv/**"] and ["/home/ada/**"]"#)
    }

    @Test func blockedTypesUniteNormalized() {
        let first = F.documents(PolicyKeys.Documents.blockedTypes([".EXE ", "image/*"]))
        let second = F.documents(PolicyKeys.Documents.blockedTypes([".exe", "Application/PDF", "  "]))
        let policy = F.merge((first, F.admin), (second, F.user))
        #expect(policy.base[PolicyKeys.Documents.blockedTypes].value == [".exe", "image/*", "application/pdf"])
        #expect(policy.base[PolicyKeys.Documents.blockedTypes].rules.count == 2)
    }

    @Test func managedAppsUniteAndOneIdIntersects() {
        let first = PolicyDocument(
            PolicyKeys.Apps.managed([
                ManagedApp(id: "notes", executables: ["/usr/bin/notes", "/opt/notes/bin/notes"]),
                ManagedApp(id: "mail", executables: ["/usr/bin/mail"], sha256: ["AA", "bb"]),
            ]))
        let second = PolicyDocument(
            PolicyKeys.Apps.managed([
                ManagedApp(id: "notes", executables: ["/opt/notes/bin/notes"], sha256: ["cc"]),
                ManagedApp(id: "mail", executables: ["/usr/bin/mail"], sha256: ["aa"]),
            ]))
        let policy = F.merge((first, F.admin), (second, F.team))
        let notes = policy.managedApps["notes"]
        #expect(notes?.value.executables == ["/opt/notes/bin/notes"])
        #expect(notes?.value.sha256 == ["cc"], "no digest list is no restriction")
        #expect(notes?.rules == [F.rule(F.admin, "/apps/managed/0"), F.rule(F.team, "/apps/managed/0")])
        #expect(policy.managedApps["mail"]?.value.sha256 == ["aa"], "digests are lower-cased, then intersect")
        #expect(policy.managedApps["mail"]?.rules.last == F.rule(F.team, "/apps/managed/1"))
    }

    @Test func disjointDigestListsAllowNoDigest() {
        let first = PolicyDocument(
            PolicyKeys.Apps.managed([ManagedApp(id: "n", executables: ["/n"], sha256: ["aa"])]))
        let second = PolicyDocument(
            PolicyKeys.Apps.managed([ManagedApp(id: "n", executables: ["/n"], sha256: ["bb"])]))
        let policy = F.merge((first, F.admin), (second, F.team))
        #expect(policy.managedApps["n"]?.value.sha256 == Set<String>())
    }

    @Test func userDocumentsCannotAddManagedAppsButCanRefuseUnknownOnes() {
        let user = PolicyDocument(
            PolicyKeys.Apps.managed([ManagedApp(id: "evil", executables: ["/tmp/evil"])]),
            PolicyKeys.Apps.unknown(.refuse))
        let policy = F.merge((F.defaults, F.builtin), (user, F.user))
        #expect(policy.managedApps.isEmpty)
        #expect(policy[PolicyKeys.Apps.unknown].value == .refuse)
        #expect(policy[PolicyKeys.Apps.unknown].rules == [F.rule(F.user, "/apps/unknown")])
    }

    @Test func overridesApplyPerAppAndOnlyTighten() {
        let base = F.pasteboard(.managed, maxChars: 1000)
        let override = PolicyDocument(overrides: [
            PolicyOverride(apps: ["notes"], PolicyKeys.Pasteboard.copyOut(.any), PolicyKeys.Pasteboard.maxChars(100)),
            PolicyOverride(apps: ["notes", "mail"], PolicyKeys.Documents.sendTo(ShareScope.none)),
        ])
        let policy = F.merge((base, F.admin), (override, F.team))
        let notes = policy.forApp("notes")
        #expect(notes[PolicyKeys.Pasteboard.copyOut].value == .managed, "an override cannot loosen the base")
        #expect(notes[PolicyKeys.Pasteboard.maxChars].value == 100)
        #expect(notes[PolicyKeys.Pasteboard.maxChars].rules == [F.rule(F.team, "/overrides/0/pasteboard/maxChars")])
        #expect(notes[PolicyKeys.Documents.sendTo].value == .none)
        #expect(notes[PolicyKeys.Documents.sendTo].rules == [F.rule(F.team, "/overrides/1/documents/sendTo")])
        #expect(policy.forApp("mail")[PolicyKeys.Documents.sendTo].value == .none)
        #expect(policy.forApp("mail")[PolicyKeys.Pasteboard.maxChars].value == 1000)
        #expect(policy.forApp("other") == policy.base)
        #expect(policy.overriddenApps == ["mail", "notes"])
    }

    @Test func overridesOfSeveralDocumentsForOneAppMerge() {
        let first = PolicyDocument(overrides: [PolicyOverride(apps: ["notes"], PolicyKeys.Lock.ackDeadlineMs(900))])
        let second = PolicyDocument(overrides: [PolicyOverride(apps: ["notes"], PolicyKeys.Lock.ackDeadlineMs(300))])
        let policy = F.merge((F.defaults, F.builtin), (first, F.admin), (second, F.user))
        #expect(policy.forApp("notes")[PolicyKeys.Lock.ackDeadlineMs].value == 300)
        #expect(policy.forApp("notes")[PolicyKeys.Lock.ackDeadlineMs].candidates.count == 3)
        #expect(policy.base[PolicyKeys.Lock.ackDeadlineMs].value == 2000)
    }

    @Test func theVersionHashIgnoresDocumentOrderAndProvenance() {
        let first = F.pasteboard(.managed)
        let second = F.documents(PolicyKeys.Documents.allowedTargets(["a"]))
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
                    PolicyOverride(apps: ["n"], PolicyKeys.Pasteboard.copyOut(.blocked))
                ]), F.admin
            ))
        #expect(plain.versionHash != overridden.versionHash)
    }
}
