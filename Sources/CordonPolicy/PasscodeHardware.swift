/// Whether the master key's wrapping is sealed by a TPM 2.0 (`passcode.hardware`).
public enum PasscodeHardware: String, Sendable, CaseIterable, Restrictiveness, PolicyValue {
    /// Never: the passcode alone (scrypt) protects the key.
    case off
    /// When a TPM is present; without one the key is protected by scrypt alone, with a warning.
    case preferred
    /// Always: without a TPM the container cannot be initialised.
    case required

    public var strictness: Int {
        switch self {
        case .off: return 0
        case .preferred: return 1
        case .required: return 2
        }
    }
}

/// PCR indices of the SHA-256 bank a TPM seal is bound to (`passcode.pcrs`).
public struct PCRSelection: PolicyValue {
    /// The indices, 0 to 23.
    public var indices: Set<Int>

    public init(_ indices: some Sequence<Int>) {
        self.indices = Set(indices)
    }

    /// The indices in ascending order.
    public var sorted: [Int] { indices.sorted() }

    /// A JSON list, ascending.
    public var policyDescription: String { "[" + sorted.map(String.init).joined(separator: ", ") + "]" }

    /// Binding to more PCRs is stricter: the selections of all files unite.
    @Sendable static func union(_ lhs: PCRSelection, _ rhs: PCRSelection) -> PCRSelection {
        PCRSelection(lhs.indices.union(rhs.indices))
    }
}

extension ValueSyntax where Parsed == PCRSelection {
    /// A list of PCR indices, each 0 to 23.
    static var pcrs: Self {
        Self(
            parse: { json, validator in
                validator.list(json, of: "PCR indices") { element in validator.integer(element, in: 0...23) }
                    .map(PCRSelection.init)
            },
            schema: .object([
                ("type", "array"),
                (
                    "items",
                    .object([
                        ("description", "A PCR index of the SHA-256 bank."), ("type", "integer"),
                        ("minimum", .integer(0)), ("maximum", .integer(23)),
                    ])
                ),
            ]))
    }
}
