extension PositionedJSON {
    /// Where a value sits in its document: the chain of reference tokens from the root.
    ///
    /// Each value's path extends its parent's without copying it, so a long key above a wide
    /// array is stored once, not once per element (the parser's memory stays proportional to the
    /// input). `pointer` spells the path as an RFC 6901 JSON pointer.
    public indirect enum Path: Sendable, Hashable, CustomStringConvertible {
        /// The whole document (pointer "").
        case root
        /// The member `key` of the object at the parent path.
        case member(Path, String)
        /// The element `index` of the array at the parent path.
        case element(Path, Int)

        /// The path of the member `key` of the value here.
        public func appending(_ key: String) -> Path { .member(self, key) }

        /// The path of the element `index` of the value here.
        public func appending(_ index: Int) -> Path { .element(self, index) }

        /// The JSON pointer: "" for the root, `/a/0/b~1c` for `.member(.element(.member(.root, "a"), 0), "b/c")`.
        public var pointer: String {
            var tokens: [String] = []
            var current = self
            while true {
                switch current {
                case .root:
                    return tokens.reversed().reduce(into: "") { $0 += "/" + $1 }
                case .member(let parent, let key):
                    tokens.append(PositionedJSON.escapePointerToken(key))
                    current = parent
                case .element(let parent, let index):
                    tokens.append(String(index))
                    current = parent
                }
            }
        }

        /// How many tokens deep the path is (0 for the root).
        public var depth: Int {
            var depth = 0
            var current = self
            while true {
                switch current {
                case .root: return depth
                case .member(let parent, _), .element(let parent, _):
                    depth += 1
                    current = parent
                }
            }
        }

        /// The JSON pointer.
        public var description: String { pointer }
    }

    /// One reference token escaped as RFC 6901 says (`~` → `~0`, `/` → `~1`).
    public static func escapePointerToken(_ token: String) -> String {
        var escaped = ""
        for character in token.unicodeScalars {
            switch character {
            case "~": escaped += "~0"
            case "/": escaped += "~1"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// `parent` (a JSON pointer) extended by one reference token, escaped.
    public static func pointer(_ parent: String, appending token: String) -> String {
        parent + "/" + escapePointerToken(token)
    }

    /// `parent` (a JSON pointer) extended by an array index.
    public static func pointer(_ parent: String, appending index: Int) -> String { parent + "/" + String(index) }

    /// One reference token unescaped (`~1` → `/`, then `~0` → `~`).
    public static func unescapePointerToken(_ token: String) -> String {
        var result = ""
        var scalars = token.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            guard scalar == "~" else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalars.next() {
            case "0": result += "~"
            case "1": result += "/"
            case let other?: result += "~" + String(other)
            case nil: result += "~"
            }
        }
        return result
    }
}
