import CordonPolicy
import Testing

@Suite("Evaluator: documents")
struct EvaluatorDocumentTests {
    typealias F = MergeFixtures

    @Test(arguments: [ShareScope.any, .managed, .none])
    func sendToScopes(scope: ShareScope) {
        let evaluator = F.evaluator((F.documents(PolicyKeys.Documents.sendTo(scope)), F.admin))
        let toManaged = evaluator.decide(F.send(from: F.notes, to: F.mail))
        let toUnmanaged = evaluator.decide(F.send(from: F.notes, to: F.browser))
        let toNobody = evaluator.decide(F.send(from: F.notes, to: nil))
        #expect(toManaged.allowed == (scope != .none))
        #expect(toUnmanaged.allowed == (scope == .any))
        #expect(toNobody.allowed == (scope == .any))
        #expect(toUnmanaged.reason.hasPrefix("documents.sendTo is \"\(scope.rawValue)\""))
        #expect(toUnmanaged.rules.contains(F.rule(F.admin, "/documents/sendTo")))
    }

    @Test(arguments: [ShareScope.any, .managed, .none])
    func receiveFromScopes(scope: ShareScope) {
        let evaluator = F.evaluator((F.documents(PolicyKeys.Documents.receiveFrom(scope)), F.admin))
        #expect(evaluator.decide(F.receive(by: F.notes, from: F.mail)).allowed == (scope != .none))
        #expect(evaluator.decide(F.receive(by: F.notes, from: F.browser)).allowed == (scope == .any))
        let denied = evaluator.decide(F.receive(by: F.notes, from: F.browser))
        if scope == .managed {
            #expect(denied.reason == #"documents.receiveFrom is "managed" and the source is unmanaged"#)
        }
        #expect(evaluator.decide(F.send(from: F.notes, to: F.browser)).allowed, "receiveFrom does not limit sends")
    }

    @Test func allowedTargetsMustListTheTargetAndDenialsNameTheListsThatLeaveItOut() {
        let first = F.documents(PolicyKeys.Documents.allowedTargets([F.mail.id, F.browser.id]))
        let second = F.documents(PolicyKeys.Documents.allowedTargets([F.mail.id]))
        let evaluator = F.evaluator((first, F.admin), (second, F.team))
        let allowed = evaluator.decide(F.send(from: F.notes, to: F.mail))
        #expect(allowed.allowed)
        #expect(allowed.reason == #"documents.sendTo is "any" and documents.allowedTargets lists the target"#)
        let denied = evaluator.decide(F.send(from: F.notes, to: F.browser))
        #expect(!denied.allowed)
        #expect(denied.reason == "documents.allowedTargets does not list the target")
        #expect(denied.rules == [F.rule(F.team, "/documents/allowedTargets")])
        let nobody = evaluator.decide(F.send(from: F.notes, to: nil))
        #expect(nobody.rules.count == 2)
        #expect(evaluator.decide(F.receive(by: F.notes, from: F.browser)).allowed, "allowedTargets is for sends")
    }

    @Test func allowedSourcesMustListTheSource() {
        let evaluator = F.evaluator((F.documents(PolicyKeys.Documents.allowedSources([F.mail.id])), F.user))
        #expect(evaluator.decide(F.receive(by: F.notes, from: F.mail)).allowed)
        let denied = evaluator.decide(F.receive(by: F.notes, from: F.game))
        #expect(denied.reason == "documents.allowedSources does not list the source")
        #expect(denied.rules == [F.rule(F.user, "/documents/allowedSources")])
        let empty = F.evaluator((F.documents(PolicyKeys.Documents.allowedSources([])), F.user))
        #expect(!empty.decide(F.receive(by: F.notes, from: F.mail)).allowed, "an empty list allows nothing")
    }

    @Test(arguments: [
        ("application/pdf", true), ("Application/PDF; charset=binary", true), ("image/png", true),
        ("IMAGE/SVG+XML", true), ("image/", false), ("text/plain", false), ("setup.EXE", true),
        ("/home/ada/Downloads/setup.exe", true), (".exe", true), ("exe", true), ("EXE", true),
        ("notes.exe.txt", false), ("backup.tar.gz", true), ("tar.gz", false), ("report.pdf", false),
        ("application/x-msdownload", false),
    ])
    func blockedTypesMatchMIMETypesWildcardsAndExtensions(contentType: String, blocked: Bool) {
        let section = PolicyKeys.Documents.blockedTypes(["application/pdf", "image/*", ".exe", ".tar.gz"])
        let evaluator = F.evaluator((F.documents(section), F.admin))
        let send = evaluator.decide(F.send(from: F.notes, to: F.mail, contentType: contentType))
        let receive = evaluator.decide(F.receive(by: F.notes, from: F.mail, contentType: contentType))
        let save = evaluator.decide(F.save(to: "/tmp/x", contentType: contentType))
        #expect(send.allowed == !blocked)
        #expect(receive.allowed == !blocked)
        #expect(save.allowed == !blocked)
        if blocked { #expect(send.reason.hasPrefix("documents.blockedTypes lists ")) }
    }

    @Test func blockedTypeDenialsNameTheDocumentsListingThePattern() {
        let first = F.documents(PolicyKeys.Documents.blockedTypes([".exe", "image/*"]))
        let second = F.documents(PolicyKeys.Documents.blockedTypes([".EXE"]))
        let evaluator = F.evaluator((first, F.admin), (second, F.user))
        let exe = evaluator.decide(F.send(from: F.notes, to: F.mail, contentType: "a.exe"))
        #expect(exe.reason == #"documents.blockedTypes lists ".exe" and the content matches it"#)
        #expect(exe.rules == [F.rule(F.admin, "/documents/blockedTypes"), F.rule(F.user, "/documents/blockedTypes")])
        let image = evaluator.decide(F.send(from: F.notes, to: F.mail, contentType: "image/gif"))
        #expect(image.rules == [F.rule(F.admin, "/documents/blockedTypes")])
        let everything = F.evaluator((F.documents(PolicyKeys.Documents.blockedTypes(["*/*"])), F.admin))
        #expect(!everything.decide(F.send(from: F.notes, to: F.mail, contentType: "text/plain")).allowed)
        #expect(everything.decide(F.send(from: F.notes, to: F.mail, contentType: "notes.txt")).allowed)
        #expect(everything.decide(F.send(from: F.notes, to: F.mail)).allowed, "no content type, nothing to match")
    }

    @Test func saveCopiesBlockDeniesEverySave() {
        let evaluator = F.evaluator((F.documents(PolicyKeys.Documents.saveCopies(.block)), F.admin))
        let decision = evaluator.decide(F.save(to: "/home/ada/a.txt"))
        #expect(!decision.allowed)
        #expect(decision.reason == #"documents.saveCopies is "block""#)
        #expect(decision.rules == [F.rule(F.admin, "/documents/saveCopies")])
    }

    @Test(arguments: [
        ("/home/ada/Documents/a.txt", true), ("/home/ada/Documents/x/y/z.txt", true),
        ("/home/bob/Documents/a.txt", true), ("/home/ada/Downloads/a.txt", false), ("/srv/share/r1.csv", true),
        ("/srv/share/r10.csv", false), ("/srv/share/sub/r1.csv", false), ("/home/ada/Documents", false),
        ("/tmp/a.txt", false), ("~/Documents/a.txt", false),
    ])
    func saveLocationsMatchGlobs(location: String, allowed: Bool) {
        let section = PolicyKeys.Documents.saveLocations(["/home/*/Documents/**", "/srv/share/r?.csv"])
        let evaluator = F.evaluator((F.documents(section), F.admin))
        let decision = evaluator.decide(F.save(to: location))
        #expect(decision.allowed == allowed)
        if !allowed {
            #expect(decision.reason == "documents.saveLocations does not match the location")
            #expect(decision.rules == [F.rule(F.admin, "/documents/saveLocations")])
        }
    }

    @Test func saveLocationsOfSeveralDocumentsMustAllMatch() {
        let first = F.documents(PolicyKeys.Documents.saveLocations(["/home/*/Documents/**"]))
        let second = F.documents(PolicyKeys.Documents.saveLocations(["/home/ada/**", "/srv/**"]))
        let evaluator = F.evaluator((first, F.admin), (second, F.user))
        #expect(evaluator.decide(F.save(to: "/home/ada/Documents/a.txt")).allowed)
        let bob = evaluator.decide(F.save(to: "/home/bob/Documents/a.txt"))
        #expect(!bob.allowed)
        #expect(bob.rules == [F.rule(F.user, "/documents/saveLocations")])
        let noLocation = evaluator.decide(F.save(to: nil))
        #expect(noLocation.reason == "documents.saveLocations is set and the save names no location")
        #expect(
            !F.evaluator((F.documents(PolicyKeys.Documents.saveLocations([])), F.admin)).decide(F.save(to: "/a"))
                .allowed)
    }

    @Test func savingABlockedExtensionIsDeniedByItsLocation() {
        let evaluator = F.evaluator((F.documents(PolicyKeys.Documents.blockedTypes([".exe", "text/*"])), F.admin))
        #expect(!evaluator.decide(F.save(to: "/home/ada/setup.EXE")).allowed)
        #expect(evaluator.decide(F.save(to: "/home/ada/text/plain")).allowed, "MIME entries never match paths")
        let allowed = evaluator.decide(F.save(to: "/home/ada/a.txt"))
        #expect(allowed.allowed)
        #expect(allowed.reason == #"documents.saveCopies is "allow""#)
    }

    @Test func anAppOverrideTightensOnlyThatAppsDocuments() {
        let document = PolicyDocument(overrides: [
            PolicyOverride(
                apps: [F.notes.id], PolicyKeys.Documents.sendTo(.managed), PolicyKeys.Documents.saveCopies(.block))
        ])
        let evaluator = F.evaluator((document, F.admin))
        #expect(!evaluator.decide(F.send(from: F.notes, to: F.browser)).allowed)
        #expect(evaluator.decide(F.send(from: F.mail, to: F.browser)).allowed)
        #expect(evaluator.decide(F.send(from: F.browser, to: F.notes)).allowed, "the target's override is not read")
        #expect(!evaluator.decide(F.save(by: F.notes, to: "/a")).allowed)
        #expect(evaluator.decide(F.save(by: F.mail, to: "/a")).allowed)
    }
}
