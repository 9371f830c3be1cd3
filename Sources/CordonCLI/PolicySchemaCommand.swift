import ArgumentParser
import CordonPolicy

/// `cordon policy schema`: prints the JSON Schema of policy files, or the built-in default policy.
struct PolicySchemaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Print the JSON Schema of policy files (cordon.policy.v1), or with --default the built-in policy.",
        discussion: """
            Both are generated from the one declaration of every setting that the parser and the \
            merge also use; policies/cordon.policy.v1.schema.json and policies/default.json are \
            this output (`make policy-files` writes them). Point an editor's JSON Schema support at \
            the schema to check policy files while writing them.
            """)

    @Flag(name: .customLong("default"), help: "Print the built-in default policy instead of the schema.")
    var builtinDefault = false

    func run() async throws {
        let text = builtinDefault ? PolicySchema.defaultPolicy : PolicySchema.jsonSchema
        try Output.line(String(text.dropLast()))
    }
}
