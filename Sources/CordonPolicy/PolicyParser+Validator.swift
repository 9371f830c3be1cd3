extension PolicyParser {
    /// Walks a parsed document, converting what is valid and collecting a diagnostic for every
    /// problem (it never stops at the first).
    final class Validator {
        let source: PolicySource
        private(set) var diagnostics: [PolicyDiagnostic] = []

        init(source: PolicySource) { self.source = source }

        /// Records a problem with the value `json`.
        func report(_ json: PositionedJSON, _ message: String) {
            report(pointer: json.pointer, line: json.line, column: json.column, message)
        }

        /// Records a problem at an explicit position.
        func report(pointer: String, line: Int?, column: Int?, _ message: String) {
            diagnostics.append(
                PolicyDiagnostic(path: source.path, pointer: pointer, line: line, column: column, message: message))
        }

        /// The members of an object whose keys are all in `keys` (each unknown key reported, with a
        /// suggestion) and which has every key in `required`; nil when `json` is not an object.
        func object(
            _ json: PositionedJSON, context: String, keys: [String], required: [String] = [],
            specialKeys: [String: String] = [:]
        ) -> [String: PositionedJSON]? {
            guard case .object(let members) = json.value else {
                report(json, "expected an object, got \(json.shortDescription)")
                return nil
            }
            var known: [String: PositionedJSON] = [:]
            for member in members {
                if keys.contains(member.key) {
                    known[member.key] = member.value
                    continue
                }
                let message =
                    specialKeys[member.key]
                    ?? Suggestions.unknownKeyMessage(member.key, context: context, candidates: keys)
                report(pointer: member.value.pointer, line: member.keyLine, column: member.keyColumn, message)
            }
            for key in required where known[key] == nil {
                let place = context.isEmpty ? "" : " in \(PositionedJSON.quoted(context))"
                report(json, "missing required key \(PositionedJSON.quoted(key))\(place)")
            }
            return known
        }

        /// An integer within `range`.
        func integer(_ json: PositionedJSON, in range: ClosedRange<Int>) -> Int? {
            if case .number(let number) = json.value, let value = number.integerValue, range.contains(value) {
                return value
            }
            report(
                json,
                "expected an integer from \(range.lowerBound) to \(range.upperBound), got \(json.shortDescription)")
            return nil
        }

        /// `true` or `false`.
        func bool(_ json: PositionedJSON) -> Bool? {
            if case .bool(let flag) = json.value { return flag }
            report(json, "expected true or false, got \(json.shortDescription)")
            return nil
        }

        /// One of `choices`, spelled exactly as its raw value.
        func choice<Choice: RawRepresentable<String>>(_ json: PositionedJSON, _ choices: [Choice]) -> Choice? {
            let spellings = choices.map(\.rawValue)
            if case .string(let text) = json.value, let index = spellings.firstIndex(of: text) {
                return choices[index]
            }
            var message =
                "expected one of \(spellings.map { PositionedJSON.quoted($0) }.joined(separator: ", ")), "
                + "got \(json.shortDescription)"
            if case .string(let text) = json.value, let suggestion = Suggestions.closest(to: text, in: spellings) {
                message += "; did you mean \(PositionedJSON.quoted(suggestion))?"
            }
            report(json, message)
            return nil
        }

        /// A string that `isValid` accepts; `expected` describes one ("an absolute path …").
        func string(_ json: PositionedJSON, expected: String, where isValid: (String) -> Bool) -> String? {
            if case .string(let text) = json.value, isValid(text) { return text }
            report(json, "expected \(expected), got \(json.shortDescription)")
            return nil
        }

        /// An array whose elements `element` converts (each problem reported); `noun` names the
        /// elements ("app ids"); `nonEmpty` names one element when the array must not be empty.
        func list<Element>(
            _ json: PositionedJSON, of noun: String, nonEmpty singular: String? = nil,
            element: (PositionedJSON) -> Element?
        ) -> [Element]? {
            guard case .array(let elements) = json.value else {
                report(json, "expected an array of \(noun), got \(json.shortDescription)")
                return nil
            }
            if let singular, elements.isEmpty {
                report(json, "expected at least one \(singular), got an empty array")
                return nil
            }
            let converted = elements.compactMap(element)
            return converted.count == elements.count ? converted : nil
        }

        /// A list of reverse-DNS app ids.
        func appIds(_ json: PositionedJSON, nonEmpty: Bool = false) -> [String]? {
            list(json, of: "app ids", nonEmpty: nonEmpty ? "app id" : nil) { self.appId($0) }
        }

        /// A reverse-DNS app id.
        func appId(_ json: PositionedJSON) -> String? {
            string(json, expected: Expected.appId, where: Rules.isAppId)
        }
    }

    /// How messages describe the expected strings.
    enum Expected {
        static let appId =
            "a reverse-DNS app id such as \"com.example.notes\" (letters, digits, '_' and '-' in dot-separated labels)"
        static let absolutePath = "an absolute path (starting with '/')"
        static let sha256 = "a SHA-256 digest (64 lower-case hexadecimal digits)"
        static let glob = "a non-empty glob"
        static let blockedType = "a MIME type (\"application/pdf\", \"image/*\") or a file extension (\".exe\")"
    }

    /// "Did you mean …?" for misspelt keys and values.
    enum Suggestions {
        /// The message for `key`, unknown in `context` ("" for the top level), whose valid keys are
        /// `candidates`: with the closest candidate, or the section the key belongs in, or the list.
        static func unknownKeyMessage(_ key: String, context: String, candidates: [String]) -> String {
            let place = context.isEmpty ? "at the top level" : "in \(PositionedJSON.quoted(context))"
            let prefix = "unknown key \(PositionedJSON.quoted(key)) \(place)"
            if let suggestion = closest(to: key, in: candidates) {
                return "\(prefix); did you mean \(PositionedJSON.quoted(suggestion))?"
            }
            let here = context.split(separator: ".").last.map(String.init)
            if let home = Rules.sectionKeys.first(where: { $0.keys.contains(key) && $0.section != here }) {
                return "\(prefix); it belongs in the \(PositionedJSON.quoted(home.section)) section"
            }
            let expected = candidates.map { PositionedJSON.quoted($0) }.joined(separator: ", ")
            return "\(prefix); expected one of \(expected)"
        }

        /// The candidate closest to `text`, if one is close enough to be what was meant: a small
        /// edit distance (case-insensitive, transpositions count once), or `text` as a prefix.
        static func closest(to text: String, in candidates: [String]) -> String? {
            let typed = Array(text.lowercased().unicodeScalars)
            guard !typed.isEmpty, typed.count <= 64 else { return nil }
            var best: (candidate: String, distance: Int)?
            for candidate in candidates {
                let target = Array(candidate.lowercased().unicodeScalars)
                let distance = editDistance(typed, target)
                let tolerance = max(1, min(3, target.count / 3))
                let isPrefix = typed.count >= 4 && target.starts(with: typed)
                guard distance <= tolerance || isPrefix else { continue }
                if best.map({ distance < $0.distance }) ?? true {
                    best = (candidate, distance)
                }
            }
            return best?.candidate
        }

        /// The optimal-string-alignment distance: insertions, deletions, substitutions and
        /// transpositions of neighbours each cost 1.
        static func editDistance<Element: Equatable>(_ lhs: [Element], _ rhs: [Element]) -> Int {
            if lhs.isEmpty { return rhs.count }
            if rhs.isEmpty { return lhs.count }
            var previousPrevious = [Int](repeating: 0, count: rhs.count + 1)
            var previous = Array(0...rhs.count)
            var current = [Int](repeating: 0, count: rhs.count + 1)
            for i in 1...lhs.count {
                current[0] = i
                for j in 1...rhs.count {
                    let cost = lhs[i - 1] == rhs[j - 1] ? 0 : 1
                    var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                    if i > 1, j > 1, lhs[i - 1] == rhs[j - 2], lhs[i - 2] == rhs[j - 1] {
                        value = min(value, previousPrevious[j - 2] + 1)
                    }
                    current[j] = value
                }
                (previousPrevious, previous, current) = (previous, current, previousPrevious)
            }
            return previous[rhs.count]
        }
    }
}
