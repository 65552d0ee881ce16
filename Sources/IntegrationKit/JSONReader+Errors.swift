import Foundation

extension JSONReader {
    public struct SyntaxError: Error {
        public var offset: Int
        public var reason: String

        public init(offset: Int, reason: String) {
            self.offset = offset
            self.reason = reason
        }
    }

    /// A field that is missing, null or of the wrong type, named by its path in the item.
    public struct FieldError: Error {
        public var reason: String

        public init(reason: String) { self.reason = reason }
    }

    /// Valid JSON that nests deeper than ``maxDepth``: feedsync does not read it, and since the
    /// same body will nest as deeply when asked again, a caller reports it as a broken contract
    /// rather than a transient fault worth a retry.
    public struct TooDeepError: Error {
        public var offset: Int

        public init(offset: Int) { self.offset = offset }

        /// What is wrong, as a phrase.
        public var reason: String { "the body nests values more than \(JSONReader.maxDepth) deep (at byte \(offset)), deeper than feedsync reads" }
    }
}
