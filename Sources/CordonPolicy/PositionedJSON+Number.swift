extension PositionedJSON {
    /// A JSON number, kept as written so that no precision is lost, with its exact integer value
    /// when it has one.
    ///
    /// A number is an integer when its mathematical value is one, as JSON Schema counts it:
    /// `5`, `-0`, `5.0` and `5e2` are integers, `5.5` and `5e-1` are not.
    public struct Number: Sendable, Hashable, CustomStringConvertible {
        /// The number exactly as it appears in the document.
        public var text: String
        /// Whether the number's mathematical value is an integer.
        public var isInteger: Bool
        /// The exact value when the number is an integer that fits in `Int`.
        public var integerValue: Int?

        /// A number from its text; the text must be a valid JSON number (it is not checked).
        public init(text: String) {
            self.text = text
            let (isInteger, integerValue) = Self.integerValue(of: Array(text.utf8))
            self.isInteger = isInteger
            self.integerValue = integerValue
        }

        /// The nearest `Double` (infinite when out of range).
        public var doubleValue: Double { Double(text) ?? .nan }

        /// The number as written.
        public var description: String { text }

        /// Whether the JSON number text is an integer, and its value if that fits in `Int`.
        static func integerValue(of text: [UInt8]) -> (isInteger: Bool, value: Int?) {
            var index = 0
            let negative = text.first == UInt8(ascii: "-")
            if negative { index += 1 }
            var digits: [UInt8] = []
            var fractionDigits = 0
            while index < text.count, isDigit(text[index]) {
                digits.append(text[index])
                index += 1
            }
            if index < text.count, text[index] == UInt8(ascii: ".") {
                index += 1
                while index < text.count, isDigit(text[index]) {
                    digits.append(text[index])
                    fractionDigits += 1
                    index += 1
                }
            }
            var exponent = 0
            if index < text.count, text[index] | 0x20 == UInt8(ascii: "e") {
                index += 1
                var exponentNegative = false
                if index < text.count, text[index] == UInt8(ascii: "+") || text[index] == UInt8(ascii: "-") {
                    exponentNegative = text[index] == UInt8(ascii: "-")
                    index += 1
                }
                while index < text.count, isDigit(text[index]) {
                    // Saturate: anything beyond a billion is out of every range anyway.
                    exponent = min(exponent * 10 + Int(text[index] - UInt8(ascii: "0")), 1_000_000_000)
                    index += 1
                }
                if exponentNegative { exponent = -exponent }
            }
            return integer(digits: digits, exponent: exponent - fractionDigits, negative: negative)
        }

        /// The integer `digits × 10^exponent` (sign applied), if it is one.
        private static func integer(digits: [UInt8], exponent: Int, negative: Bool) -> (isInteger: Bool, value: Int?) {
            var significant = digits.drop { $0 == UInt8(ascii: "0") }
            guard !significant.isEmpty else { return (true, 0) }
            var exponent = exponent
            while significant.last == UInt8(ascii: "0") {
                significant.removeLast()
                exponent += 1
            }
            guard exponent >= 0 else { return (false, nil) }
            guard significant.count + exponent <= 19 else { return (true, nil) }
            var magnitude: UInt64 = 0
            for digit in significant {
                magnitude = magnitude * 10 + UInt64(digit - UInt8(ascii: "0"))
            }
            for _ in 0..<exponent {
                let (product, overflow) = magnitude.multipliedReportingOverflow(by: 10)
                guard !overflow else { return (true, nil) }
                magnitude = product
            }
            if negative {
                guard magnitude <= UInt64(Int.max) + 1 else { return (true, nil) }
                return (true, magnitude == UInt64(Int.max) + 1 ? Int.min : -Int(magnitude))
            }
            guard magnitude <= UInt64(Int.max) else { return (true, nil) }
            return (true, Int(magnitude))
        }

        private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
    }
}
