/// A compiled `saveLocations` glob: `*` matches within one path segment, `**` across segments,
/// `?` one character (not `/`), `\` escapes the next character; everything else is literal and
/// case-sensitive. `~` is not expanded (the caller expands it on both sides if it wants to).
///
/// `a/**/b` matches `a/b`, `a/x/b` and `a/x/y/b`; a trailing `**` matches anything below
/// (`a/**` matches `a/x` and `a/x/y`, not `a`). Matching simulates the pattern as an automaton:
/// linear in the path length times the pattern length, whatever the pattern, and it does not
/// allocate for patterns of up to 64 tokens.
struct PathGlob: Sendable, Hashable {
    enum Token: Sendable, Hashable {
        case literal(Unicode.Scalar)
        /// `?`: one character except `/`.
        case one
        /// `*`: any run of characters except `/`.
        case star
        /// `**` not followed by `/`: any run of characters.
        case globstar
        /// `**/`: nothing, or any run of characters ending with `/` (zero or more whole segments).
        /// Consumes nothing itself: it may skip past its body or enter it.
        case segments
        /// The body of `**/`: any run of characters, left only by consuming a `/`.
        case segmentsBody
    }

    /// The pattern as written.
    let pattern: String
    let tokens: [Token]

    init(_ pattern: String) {
        self.pattern = pattern
        var tokens: [Token] = []
        var scalars = Array(pattern.unicodeScalars)[...]
        while let scalar = scalars.popFirst() {
            switch scalar {
            case "\\": tokens.append(.literal(scalars.popFirst() ?? "\\"))
            case "?": tokens.append(.one)
            case "*" where scalars.first == "*":
                while scalars.first == "*" { scalars.removeFirst() }
                if scalars.first == "/" {
                    scalars.removeFirst()
                    if tokens.last != .segmentsBody { tokens += [.segments, .segmentsBody] }
                } else {
                    Self.appendWildcard(.globstar, to: &tokens)
                }
            case "*": Self.appendWildcard(.star, to: &tokens)
            default: tokens.append(.literal(scalar))
            }
        }
        self.tokens = tokens
    }

    /// Appends `*` or `**`, folding runs of wildcards into the widest (they match the same paths).
    private static func appendWildcard(_ token: Token, to tokens: inout [Token]) {
        switch (tokens.last, token) {
        case (.star, .star), (.globstar, _): return
        case (.star, .globstar): tokens[tokens.count - 1] = .globstar
        default: tokens.append(token)
        }
    }

    /// Whether `path` matches the whole pattern.
    func matches(_ path: String) -> Bool {
        let states = tokens.count + 1
        if states <= 64 { return matchesSmall(path) }
        return withUnsafeTemporaryAllocation(of: Bool.self, capacity: states * 2) { buffer in
            buffer.initialize(repeating: false)
            var current = UnsafeMutableBufferPointer(rebasing: buffer[0..<states])
            var next = UnsafeMutableBufferPointer(rebasing: buffer[states...])
            current[0] = true
            closeOver(&current)
            for scalar in path.unicodeScalars {
                var alive = false
                for index in 0..<states { next[index] = false }
                for index in 0..<tokens.count where current[index] {
                    advance(index, over: scalar) { target in
                        next[target] = true
                        alive = true
                    }
                }
                guard alive else { return false }
                closeOver(&next)
                swap(&current, &next)
            }
            return current[tokens.count]
        }
    }

    /// The automaton with its states in one 64-bit word.
    private func matchesSmall(_ path: String) -> Bool {
        var current: UInt64 = 1
        closeOver(&current)
        for scalar in path.unicodeScalars {
            var next: UInt64 = 0
            var remaining = current & ~(1 << UInt64(tokens.count))
            while remaining != 0 {
                let index = remaining.trailingZeroBitCount
                remaining &= remaining - 1
                advance(index, over: scalar) { next |= 1 << UInt64($0) }
            }
            guard next != 0 else { return false }
            closeOver(&next)
            current = next
        }
        return current & (1 << UInt64(tokens.count)) != 0
    }

    /// The states reached from `index` by consuming `scalar`.
    @inline(__always)
    private func advance(_ index: Int, over scalar: Unicode.Scalar, reach: (Int) -> Void) {
        switch tokens[index] {
        case .literal(let expected): if scalar == expected { reach(index + 1) }
        case .one: if scalar != "/" { reach(index + 1) }
        case .star: if scalar != "/" { reach(index) }
        case .globstar: reach(index)
        case .segments: break
        case .segmentsBody:
            reach(index)
            if scalar == "/" { reach(index + 1) }
        }
    }

    /// Adds the states reachable without consuming: past a wildcard (it may match nothing), and
    /// from `**/` into its body or past it. Targets are always later states, so one pass suffices.
    private func closeOver(_ states: inout UInt64) {
        for index in tokens.indices where states & (1 << UInt64(index)) != 0 {
            switch tokens[index] {
            case .star, .globstar: states |= 1 << UInt64(index + 1)
            case .segments: states |= 0b11 << UInt64(index + 1)
            case .literal, .one, .segmentsBody: break
            }
        }
    }

    private func closeOver(_ states: inout UnsafeMutableBufferPointer<Bool>) {
        for index in tokens.indices where states[index] {
            switch tokens[index] {
            case .star, .globstar: states[index + 1] = true
            case .segments:
                states[index + 1] = true
                states[index + 2] = true
            case .literal, .one, .segmentsBody: break
            }
        }
    }
}
