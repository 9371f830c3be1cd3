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
    /// The automaton as bit masks, when it has at most 64 states.
    private let masks: Masks?

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
        masks = tokens.count < 64 ? Masks(tokens) : nil
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
        if let masks { return masks.matches(path, accepting: 1 << UInt64(tokens.count)) }
        return matchesWithoutMasks(path)
    }

    /// The general automaton, for patterns of more than 64 tokens.
    func matchesWithoutMasks(_ path: String) -> Bool {
        let states = tokens.count + 1
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

extension PathGlob {
    /// The automaton of up to 64 states as bit masks (bit `i` is token `i`; bit `count` accepts),
    /// so a step is a handful of word operations.
    fileprivate struct Masks: Sendable, Hashable {
        /// Per ASCII character: the literal states it advances.
        var ascii = [UInt64](repeating: 0, count: 128)
        /// Literal states of non-ASCII characters.
        var other: [Unicode.Scalar: UInt64] = [:]
        /// `?` states (advance on anything but `/`) and `*` states (stay on anything but `/`).
        var one: UInt64 = 0
        var star: UInt64 = 0
        /// States that stay on any character: `**` and the body of `**/` (which also advances on `/`).
        var anything: UInt64 = 0
        var body: UInt64 = 0
        /// States that may be passed without consuming (`*`, `**`) and `**/` entries (skip 1 and 2).
        var skipOne: UInt64 = 0
        var skipTwo: UInt64 = 0

        init(_ tokens: [Token]) {
            for (index, token) in tokens.enumerated() {
                let bit: UInt64 = 1 << UInt64(index)
                switch token {
                case .literal(let scalar):
                    if scalar.isASCII { ascii[Int(scalar.value)] |= bit } else { other[scalar, default: 0] |= bit }
                case .one: one |= bit
                case .star:
                    star |= bit
                    skipOne |= bit
                case .globstar:
                    anything |= bit
                    skipOne |= bit
                case .segments: skipTwo |= bit
                case .segmentsBody:
                    anything |= bit
                    body |= bit
                }
            }
        }

        /// Adds the states reachable without consuming (a fixed point: skips may chain).
        @inline(__always)
        func closed(_ states: UInt64) -> UInt64 {
            var states = states
            while true {
                let next = states | (states & skipOne) << 1 | (states & skipTwo) << 1 | (states & skipTwo) << 2
                if next == states { return states }
                states = next
            }
        }

        func matches(_ path: String, accepting: UInt64) -> Bool {
            var current = closed(1)
            for scalar in path.unicodeScalars {
                let literal = scalar.isASCII ? ascii[Int(scalar.value)] : other[scalar] ?? 0
                var advanced = current & literal
                var stayed = current & anything
                if scalar == "/" {
                    advanced |= current & body
                } else {
                    advanced |= current & one
                    stayed |= current & star
                }
                let next = advanced << 1 | stayed
                guard next != 0 else { return false }
                current = closed(next)
            }
            return current & accepting != 0
        }
    }
}
