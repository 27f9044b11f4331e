package io.attrflow

import kotlinx.serialization.KSerializer
import kotlinx.serialization.json.Json
import kotlinx.serialization.serializer

/**
 * Flow types defined in Kotlin: a thin layer over the generated [FlowTypeBuilder],
 * [RpcHandler] and [RpcContext] that moves typed values through kotlinx.serialization.
 * Every rule (names, locks, loads, snapshot, commit) is the core's; this file only encodes,
 * decodes and turns a thrown exception into the handler failure the caller sees.
 *
 * ```
 * val counter = flowType("Counter") {
 *     attribute("count")
 *     rpc<Unit, Int>("Increment", locks = listOf(lock("count"))) {
 *         val next = (attribute<Int>("count") ?: 0) + 1
 *         setAttribute("count", next)
 *         next
 *     }
 * }
 * store.registerFlowType(counter)
 * ```
 */

/** How typed values are written: camelCase property names, defaults included, unknown keys kept out. */
val flowJson: Json = Json {
    encodeDefaults = true
    ignoreUnknownKeys = true
}

/** A lock of the singleton Attribute [attribute]. */
fun lock(attribute: String): LockTarget = LockTarget(attribute, null)

/** A lock of one instance of the AttributeMap [map]. */
fun lock(map: String, instance: String): LockTarget = LockTarget(map, instance)

/** One instance of the AttributeMap [map], to load into a call's snapshot. */
fun load(map: String, instance: String): MapInstanceRef = MapInstanceRef(map, instance)

/** Declares a flow type; the core checks it when the block returns and refuses a bad one with [AttrflowException]. */
fun flowType(name: String, json: Json = flowJson, block: FlowTypeScope.() -> Unit): FlowType {
    val builder = FlowTypeBuilder(name)
    return builder.use {
        FlowTypeScope(it, json).block()
        it.build()
    }
}

/** The body of [flowType]: Attributes, AttributeMaps and RPCs. */
class FlowTypeScope internal constructor(private val builder: FlowTypeBuilder, val json: Json) {
    /** Declares a singleton Attribute. */
    fun attribute(name: String) = builder.attribute(name)

    /** Declares an AttributeMap. */
    fun map(name: String) = builder.map(name)

    /** A value a flow starts with under [physicalName] (`attribute` or `map/instance`) unless its start gives one. */
    inline fun <reified T> defaultValue(physicalName: String, value: T) =
        defaultValueJson(physicalName, json.encodeToString(serializer<T>(), value))

    /** [defaultValue] with the value as JSON text. */
    fun defaultValueJson(physicalName: String, valueJson: String) = builder.defaultValue(physicalName, valueJson)

    /**
     * An RPC taking [I] and returning [O]: [handler] runs with the call's locks held on its
     * snapshot; what it stages is committed when it returns and dropped when it throws.
     * [loadMaps] names the AttributeMaps every call loads whole (Dex's whole-map loads).
     */
    inline fun <reified I, reified O> rpc(
        name: String,
        locks: List<LockTarget> = emptyList(),
        loads: List<MapInstanceRef> = emptyList(),
        transactional: Boolean = false,
        loadMaps: List<String> = emptyList(),
        noinline handler: FlowContext.(I) -> O,
    ) = rpcWith(name, locks, loads, transactional, serializer<I>(), serializer<O>(), handler, loadMaps)

    /** [rpc] with explicit serializers. */
    fun <I, O> rpcWith(
        name: String,
        locks: List<LockTarget>,
        loads: List<MapInstanceRef>,
        transactional: Boolean,
        input: KSerializer<I>,
        output: KSerializer<O>,
        handler: FlowContext.(I) -> O,
        loadMaps: List<String> = emptyList(),
    ) = builder.rpc(name, TypedHandler(json, input, output, handler), locks, loads, transactional, loadMaps)
}

/** A handler's typed view of its call: reads see the snapshot and the call's own staged writes. */
class FlowContext(val raw: RpcContext, val json: Json) {
    /** The ID of the flow the RPC runs on. */
    val flowId: String get() = raw.flowId()

    /** The ID of the flow's run: what starting it returned. */
    val runId: String get() = raw.runId()

    /** The singleton Attribute [name], `null` when it holds no value. */
    inline fun <reified T> attribute(name: String): T? =
        raw.attribute(name)?.let { json.decodeFromString(serializer<T>(), it) }

    /** Stages a new value of the singleton Attribute [name]. */
    inline fun <reified T> setAttribute(name: String, value: T) =
        raw.setAttribute(name, json.encodeToString(serializer<T>(), value))

    /** Stages the deletion of the singleton Attribute [name]. */
    fun deleteAttribute(name: String) = raw.deleteAttribute(name)

    /** The instance [instance] of the map [map], `null` when loaded but absent; not loaded throws `AttributeMapNotLoaded`. */
    inline fun <reified T> mapInstance(map: String, instance: String): T? =
        raw.mapInstance(map, instance)?.let { json.decodeFromString(serializer<T>(), it) }

    /** Stages a new value of one map instance (no load or lock needed). */
    inline fun <reified T> setMapInstance(map: String, instance: String, value: T) =
        raw.setMapInstance(map, instance, json.encodeToString(serializer<T>(), value))

    /** Stages the deletion of one map instance. */
    fun deleteMapInstance(map: String, instance: String) = raw.deleteMapInstance(map, instance)

    /**
     * The keys of the instances of the map [map] holding a value in this call's view, sorted:
     * the loaded ones, with the call's staged sets added and deletes removed (Dex's
     * `get_all_instance_keys`). An instance the call did not load is not listed: load the
     * map whole (`rpc(..., loadMaps = listOf(map))`) to list all of them.
     */
    fun mapInstanceKeys(map: String): List<String> = raw.mapInstanceKeys(map)
}

/** Decodes the input, runs the handler, encodes the output; anything thrown becomes [HandlerException.Failed]. */
internal class TypedHandler<I, O>(
    private val json: Json,
    private val input: KSerializer<I>,
    private val output: KSerializer<O>,
    private val body: FlowContext.(I) -> O,
) : RpcHandler {
    override fun handle(context: RpcContext, inputJson: String): String =
        try {
            val value = json.decodeFromString(input, inputJson)
            json.encodeToString(output, FlowContext(context, json).body(value))
        } catch (e: HandlerException) {
            throw e
        } catch (e: Exception) {
            throw HandlerException.Failed(e::class.qualifiedName ?: e.javaClass.name, e.describe())
        }
}

/** The message a caller sees for what a handler threw: the core's own for an attrflow error. */
private fun Exception.describe(): String = if (this is AttrflowException) coreMessage else message ?: toString()

/**
 * The core's message of any attrflow error, word for word (each variant's `reason`). The
 * `when` has no `else`: a variant added to the generated sealed class fails to compile here
 * until it is named.
 */
val AttrflowException.coreMessage: String get() = when (this) {
    is AttrflowException.LockConflict -> reason
    is AttrflowException.FlowNotFound -> reason
    is AttrflowException.FlowNotActive -> reason
    is AttrflowException.FlowAlreadyStarted -> reason
    is AttrflowException.InvalidInput -> reason
    is AttrflowException.RunNotCurrent -> reason
    is AttrflowException.InvalidPageToken -> reason
    is AttrflowException.PageNotFound -> reason
    is AttrflowException.PageTrimmed -> reason
    is AttrflowException.RecordTrimmed -> reason
    is AttrflowException.RecordNotFound -> reason
    is AttrflowException.AttributeMapNotLoaded -> reason
    is AttrflowException.HandlerFailure -> reason
    is AttrflowException.Storage -> reason
    is AttrflowException.StorageFull -> reason
}

/** Invokes [rpc] of [flowType] on [flowId] once: [input] in, [O] out; a held lock throws `LockConflict`. */
inline fun <reified I, reified O> Store.invoke(
    flowType: String,
    flowId: String,
    rpc: String,
    input: I,
    options: InvokeOptions? = null,
    json: Json = flowJson,
): O = json.decodeFromString(
    serializer<O>(),
    invokeRpc(flowType, flowId, rpc, json.encodeToString(serializer<I>(), input), options),
)

/** [invoke], retrying lock conflicts by [retry] (the core's default policy when `null`). */
inline fun <reified I, reified O> Store.invokeWithRetry(
    flowType: String,
    flowId: String,
    rpc: String,
    input: I,
    options: InvokeOptions? = null,
    retry: RetryPolicy? = null,
    json: Json = flowJson,
): O = json.decodeFromString(
    serializer<O>(),
    invokeRpcWithRetry(flowType, flowId, rpc, json.encodeToString(serializer<I>(), input), options, retry),
)

/** One typed initial value for [Store.startFlow]: [value] under [target] (an instance of it with [instance]). */
inline fun <reified T> initialValue(target: String, instance: String? = null, value: T, json: Json = flowJson): InitialValue =
    InitialValue(target, instance, json.encodeToString(serializer<T>(), value))

/**
 * The committed value of the Attribute [name] of [flowId] (with [instance], of that instance
 * of the AttributeMap [name]), decoded as [T], or `null` when it holds none; read lock-free.
 */
inline fun <reified T> Store.attribute(
    flowId: String,
    name: String,
    instance: String? = null,
    json: Json = flowJson,
): T? = getAttribute(flowId, LockTarget(name, instance))?.let { json.decodeFromString(serializer<T>(), it) }

/**
 * Writes [value], encoded from [T], to the Attribute [name] of [flowId] from outside the
 * flow's RPCs, as Dex's `client.set_attribute(flow_id, attribute, value)`; `null` deletes it.
 * See [Store.setAttribute] for the lock it takes and what it refuses.
 */
inline fun <reified T> Store.setAttribute(flowId: String, name: String, value: T, json: Json = flowJson) =
    setAttribute(flowId, LockTarget(name, null), json.encodeToString(serializer<T>(), value))

/**
 * Writes [value], encoded from [T], to the [instance] of the AttributeMap [map] of [flowId],
 * as Dex's `client.set_attribute(flow_id, attribute_map, instance, value)`.
 */
inline fun <reified T> Store.setAttribute(
    flowId: String,
    map: String,
    instance: String,
    value: T,
    json: Json = flowJson,
) = setAttribute(flowId, LockTarget(map, instance), json.encodeToString(serializer<T>(), value))
