import Foundation
import IntegrationKit
import Testing

/// HMAC-SHA256 against RFC 4231's own test cases (1 to 4, 6 and 7; case 5 is a truncated code).
@Suite struct HMACSHA256Tests {
    static func bytes(_ hex: String) -> Data {
        var data = Data()
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            data.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return data
    }

    static let cases: [(key: Data, message: Data, code: String)] = [
        (Data(repeating: 0x0b, count: 20), Data("Hi There".utf8),
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        (Data("Jefe".utf8), Data("what do ya want for nothing?".utf8),
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        (Data(repeating: 0xaa, count: 20), Data(repeating: 0xdd, count: 50),
         "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        (bytes("0102030405060708090a0b0c0d0e0f10111213141516171819"), Data(repeating: 0xcd, count: 50),
         "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        (Data(repeating: 0xaa, count: 131), Data("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        (Data(repeating: 0xaa, count: 131),
         Data("This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.".utf8),
         "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ]

    @Test(arguments: cases.indices)
    func rfc4231(_ index: Int) {
        let (key, message, code) = Self.cases[index]
        #expect(HMACSHA256.hex(key: key, message: message) == code)
        #expect(HMACSHA256.code(key: key, message: message).count == 32)
    }
}
