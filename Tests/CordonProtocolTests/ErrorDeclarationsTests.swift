import Testing

@testable import CordonProtocol

/// Each error is declared once (``ErrorDeclarations``); these prove that the IDL, the wire form
/// both ways and the CLI's text are derived from that declaration and cover every case.
@Suite("ErrorDeclarations")
struct ErrorDeclarationsTests {
    /// Distinct wire parameters for `declaration`, one value per declared parameter.
    static func sample(_ declaration: ErrorDeclaration) -> [String: JSONValue] {
        var parameters: [String: JSONValue] = [:]
        for (index, parameter) in declaration.parameters.enumerated() {
            parameters[parameter.name] =
                switch parameter.kind {
                case .string: .string("\(parameter.name)-\(index)")
                case .int: .int(index + 2)
                case .float: .double(Double(index) + 0.5)
                case .strings: .array([.string("\(parameter.name)-a"), .string("\(parameter.name)-b")])
                case .constant(let value): .string(value)
                }
        }
        return parameters
    }

    @Test(arguments: ErrorDeclarations.all.map(\.name))
    func everyDeclarationIsInItsInterfaceOnceWithItsParameters(name: String) throws {
        let declaration = try #require(ErrorDeclarations.byName[name])
        let text = try #require(InterfaceDescriptions.all[String(declaration.interface)], "\(name)'s interface")
        let lines = text.split(separator: "\n").filter { $0.hasPrefix("error \(declaration.member) (") }
        #expect(lines.count == 1, "declared once in \(declaration.interface)")
        #expect(text.contains(declaration.idl), "with its comment and parameters")
        let parsed = try #require(InterfaceDescriptions.parsed(String(declaration.interface)))
        #expect(parsed.errorParameters(String(declaration.member)) == declaration.parameters.map(\.name))
    }

    @Test(arguments: InterfaceDescriptions.names.filter { $0.hasPrefix("io.cordon.") })
    func everyErrorLineOfAnInterfaceIsDeclared(interface: String) throws {
        let text = try #require(InterfaceDescriptions.all[interface])
        let declared = Set(ErrorDeclarations.all.filter { $0.interface == interface }.map { String($0.member) })
        let members = text.split(separator: "\n").filter { $0.hasPrefix("error ") }.map {
            String($0.dropFirst("error ".count).prefix { $0 != " " })
        }
        #expect(Set(members) == declared, "no error line is written by hand")
        #expect(text.hasSuffix(ErrorDeclarations.idl(for: interface)), "the errors end the interface")
    }

    @Test func onlyTheConnectionFailuresAreNotCordonErrors() {
        let failures: [VarlinkError] = [.invalidMessage(reason: "r"), .messageTooLarge(limit: 1)]
        let undecoded = ErrorDeclarations.all.filter { $0.decode == nil }
        #expect(undecoded.map(\.name) == failures.map(\.name))
        for failure in failures {
            let declared = ErrorDeclarations.byName[failure.name]?.parameters.map(\.name) ?? []
            #expect(Set(declared) == Set(failure.parameters.keys), "\(failure.name)")
        }
    }

    @Test func namesAreUnique() {
        #expect(ErrorDeclarations.byName.count == ErrorDeclarations.all.count)
    }

    @Test(arguments: ErrorDeclarations.all.map(\.name))
    func everyVarlinkNameRoundTripsToTheSameError(name: String) throws {
        let declaration = try #require(ErrorDeclarations.byName[name])
        let parameters = Self.sample(declaration)
        guard let decode = declaration.decode else {
            #expect(CordonError(VarlinkError(name: name, parameters: parameters)) == nil, "a protocol failure")
            return
        }
        let error = try #require(CordonError(VarlinkError(name: name, parameters: parameters)))
        #expect(error == decode(ErrorArguments(parameters)))
        #expect(error.varlinkParameters == parameters, "every declared parameter, under its name, in order")
        #expect(CordonError(error.varlinkError) == error)
        if declaration.explain != nil {
            #expect(error.varlinkName == name)
        } else {
            #expect(error.varlinkName != name, "an alias encodes to the declaration that explains its case")
            #expect(error.declaration.parameters == declaration.parameters)
        }
    }

    @Test func everyCaseHasExactlyOneDeclarationItEncodesTo() {
        let cases = Set(everyCordonError.map(CordonError.caseName(of:)))
        #expect(cases.count == everyCordonError.count, "one sample per case")
        #expect(Set(ErrorDeclarations.byCase.keys) == cases)
        let explained = ErrorDeclarations.all.filter { $0.explain != nil && $0.decode != nil }
        #expect(explained.count == cases.count, "no case is explained twice")
    }

    /// Every error the agent can send has its own text for the user (issue #32): the message the
    /// CLI prints and a hint, never the "unknown error … different versions" of a name Cordon does
    /// not declare; the connection failures too, though they are no ``CordonError``.
    @Test(arguments: ErrorDeclarations.all.map(\.name))
    func everyDeclaredErrorHasItsOwnMessageAndHint(name: String) throws {
        let declaration = try #require(ErrorDeclarations.byName[name])
        let parameters = Self.sample(declaration)
        let text = try #require(ErrorDeclarations.text(for: VarlinkError(name: name, parameters: parameters)))
        #expect(!text.message.isEmpty && !text.hint.isEmpty)
        #expect(!text.message.contains("unknown error"))
        #expect(text.hint != "cordon and cordond may be different versions; update both, then try again")
        #expect(!text.message.contains(name), "the message explains rather than repeats the name")
    }

    @Test func tooLargeAMessageNamesTheLimitAndWhatToDo() throws {
        let text = try #require(ErrorDeclarations.text(for: .messageTooLarge(limit: 65536)))
        #expect(
            text.message
                == "the request is larger than cordond accepts (65536 bytes in one message); cordond closed the connection"
        )
        #expect(text.hint == "pass shorter values (a token import is at most 16 KiB), then try again")
        #expect(ErrorDeclarations.text(for: VarlinkError(name: "org.example.Unknown")) == nil)
    }

    @Test(arguments: everyCordonError)
    func everyMessageComesWithAHint(error: CordonError) {
        let text = error.text
        #expect(!text.message.isEmpty)
        #expect(!text.hint.isEmpty, "\(error.varlinkName) has no hint")
    }
}
