import CordonProtocol
import Foundation
import Testing

@Suite("JSONValue")
struct JSONValueTests {
    @Test func decodesEveryKind() throws {
        let value = try parse(
            json(#"{"n":null,"t":true,"f":false,"i":-42,"d":1.5,"s":"x","a":[1,"two",[3]],"o":{"k":{}}}"#))
        #expect(
            value
                == .object([
                    "n": .null, "t": .bool(true), "f": .bool(false), "i": .int(-42), "d": .double(1.5),
                    "s": .string("x"), "a": .array([.int(1), .string("two"), .array([.int(3)])]),
                    "o": .object(["k": .object([:])]),
                ]))
    }

    @Test func booleansAreNotNumbers() throws {
        #expect(try parse(json("true")) == .bool(true))
        #expect(try parse(json("1")) == .int(1))
        #expect(try parse(json("0")) == .int(0))
    }

    @Test func largeAndFractionalNumbers() throws {
        #expect(try parse(json("9007199254740993")) == .int(9_007_199_254_740_993))
        #expect(try parse(json("-0.25")) == .double(-0.25))
        #expect(try parse(json("1e300")) == .double(1e300))
        #expect(try parse(json("1.0")).intValue == 1)
        #expect(try parse(json("1.0")).doubleValue == 1)
    }

    @Test func roundTripsThroughJSON() throws {
        let value: JSONValue = .object([
            "list": .array([.null, .bool(false), .int(Int.max), .int(Int.min), .double(0.1), .string("é\n\"")]),
            "nested": .object(["deeper": .object(["deepest": .array([])])]),
        ])
        #expect(try parse(JSONEncoder().encode(value)) == value)
    }

    @Test func stringValue() {
        #expect(JSONValue.string("a").stringValue == "a")
        #expect(JSONValue.int(1).stringValue == nil)
        #expect(JSONValue.null.stringValue == nil)
    }

    @Test func intValueAcceptsWholeNumbersOnly() {
        #expect(JSONValue.int(-7).intValue == -7)
        #expect(JSONValue.double(3).intValue == 3)
        #expect(JSONValue.double(-2).intValue == -2)
        #expect(JSONValue.double(3.5).intValue == nil)
        #expect(JSONValue.double(1e300).intValue == nil, "too large for Int")
        #expect(JSONValue.double(.nan).intValue == nil)
        #expect(JSONValue.double(.infinity).intValue == nil)
        #expect(JSONValue.string("3").intValue == nil)
        #expect(JSONValue.bool(true).intValue == nil)
    }

    @Test func doubleValueAcceptsAnyNumber() {
        #expect(JSONValue.double(2.5).doubleValue == 2.5)
        #expect(JSONValue.int(4).doubleValue == 4)
        #expect(JSONValue.string("4").doubleValue == nil)
        #expect(JSONValue.bool(false).doubleValue == nil)
        #expect(JSONValue.null.doubleValue == nil)
    }

    @Test func subscriptReadsObjectMembers() {
        let value: JSONValue = .object(["a": .int(1), "b": .object(["c": .string("d")])])
        #expect(value["a"] == .int(1))
        #expect(value["b"]?["c"] == .string("d"))
        #expect(value["missing"] == nil)
        #expect(JSONValue.array([.int(1)])["a"] == nil)
        #expect(JSONValue.string("a")["a"] == nil)
    }

    @Test func isHashable() {
        let set: Set<JSONValue> = [.int(1), .int(1), .string("1"), .double(1.5), .null, .null]
        #expect(set.count == 4)
    }
}
