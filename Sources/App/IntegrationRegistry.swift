import Core

/// The integrations the app knows, each by its descriptor: where a config's `"integration"`
/// name, a `login` kind or an `add` form finds the integration that serves it.
///
/// The app asks the registry and never names an integration; the one list of them is
/// ``standard`` (`StandardIntegrations.swift`). A test builds a registry of its own.
///
///     let registry = IntegrationRegistry(IntegrationRegistry.standard.descriptors + [ExampleIntegration.descriptor])
///     let store = try registry.integration(for: config.store, offering: \.store, default: registry.defaultStore)
public struct IntegrationRegistry: Sendable {
    /// Every descriptor, in the order help and the manual list them.
    public let descriptors: [IntegrationDescriptor]

    /// - Precondition: no two descriptors have one name, and one of them is a store.
    public init(_ descriptors: [IntegrationDescriptor]) {
        precondition(Set(descriptors.map { $0.name.lowercased() }).count == descriptors.count, "two integrations have one name")
        precondition(descriptors.contains { $0.store != nil }, "a registry needs a store")
        self.descriptors = descriptors
    }

    /// The integration named `name` (case does not matter), whatever it offers.
    public func descriptor(named name: String) -> IntegrationDescriptor? {
        let wanted = name.lowercased()
        return descriptors.first { $0.name.lowercased() == wanted }
    }

    /// The store a config without a `"store"` section uses: the first store listed.
    public var defaultStore: IntegrationDescriptor { descriptors.first { $0.store != nil }! }

    /// The integration whose capability `capability` builds `section`, as its `"integration"`
    /// key names it (the key marked read).
    ///
    /// - Parameter fallback: the integration of a section without the key; `nil`: it is required.
    /// - Throws: ``ConfigError`` for a missing key, or a name no integration here answers
    ///   with that capability (the message lists those that do).
    public func integration<Capability>(for section: ConfigSection, offering capability: KeyPath<IntegrationDescriptor, Capability?>,
                                        default fallback: IntegrationDescriptor? = nil) throws -> (IntegrationDescriptor, Capability) {
        let name = try section.require(section.nonEmptyString("integration") ?? fallback?.name, "integration")
        guard let descriptor = descriptor(named: name), let offered = descriptor[keyPath: capability] else {
            let known = descriptors.filter { $0[keyPath: capability] != nil }.map { "\"\($0.name)\"" }.sorted().joined(separator: ", ")
            throw section.error("integration", "unknown integration \"\(Terminal.safe(name, limit: 60))\"; known here: \(known)")
        }
        return (descriptor, offered)
    }

    /// The integration an `"integration"` value *as written* names, or `nil` when it names none
    /// here: for commands that read the config's text (`logout`).
    public func integration(named value: ConfigValue?) -> IntegrationDescriptor? {
        guard case .string(let name)? = value else { return nil }
        return descriptor(named: name)
    }

    /// Every integration with a sign-in flow, in order.
    public var signIns: [(descriptor: IntegrationDescriptor, flow: any SignInFlow)] {
        descriptors.compactMap { descriptor in descriptor.signIn.map { (descriptor, $0) } }
    }

    /// Every form of `feedsync add`, in the order help lists them (the registry's).
    public var addForms: [any AddForm] { descriptors.flatMap(\.addForms) }

    /// The integration that reads a config's `"opml"` entries into feeds, if one does.
    public var subscriptionList: (descriptor: IntegrationDescriptor, capability: SubscriptionListCapability)? {
        descriptors.lazy.compactMap { descriptor in descriptor.subscriptions.map { (descriptor, $0) } }.first
    }

    /// Every key, of any integration, whose value is a file: what a sign-in must not overwrite.
    public var pathKeys: Set<String> {
        Set(descriptors.flatMap { $0.keys.filter { $0.kind == .path }.map(\.name) })
    }
}
