package io.attrflow

import kotlinx.serialization.Serializable

/**
 * The sequentially chunked subscriber archive defined in Kotlin, with the stored layout and
 * names of the built-in `ChunkedSubscriberFlow` and of the Python-defined one: the state
 * Attribute `subscriber_archive_state`, the AttributeMap `subscriber_chunks` with the open
 * chunk under `current` and each full chunk under the 20-digit token of its first sequence.
 */
object KotlinSubscriberFlow {
    const val TYPE = "ChunkedSubscriberFlow"
    const val STATE = "subscriber_archive_state"
    const val CHUNKS = "subscriber_chunks"
    const val CURRENT = "current"
    const val REGISTER = "RegisterSubscriber"
    const val GET_PAGE = "GetSubscriberPage"
    private const val CHUNK_SIZE = 100
    private const val TOKEN_DIGITS = 20

    @Serializable
    data class Subscriber(val sequence: Long, val subscriberId: String, val deliveryAddress: String)

    @Serializable
    data class State(val nextSequence: Long, val latestArchivedChunkToken: String)

    @Serializable
    data class Chunk(val subscribers: List<Subscriber> = emptyList())

    @Serializable
    data class RegisterInput(val subscriberId: String, val deliveryAddress: String)

    @Serializable
    data class PageInput(val pageToken: String)

    @Serializable
    data class Page(val pageToken: String, val subscribers: List<Subscriber>, val nextPageToken: String)

    val definition: FlowType by lazy {
        flowType(TYPE) {
            attribute(STATE)
            map(CHUNKS)
            rpc<RegisterInput, Subscriber>(
                REGISTER,
                locks = listOf(lock(STATE), lock(CHUNKS, CURRENT)),
                loads = listOf(load(CHUNKS, CURRENT)),
            ) { input ->
                require(input.subscriberId.isNotEmpty()) { "subscriberId is required" }
                require(input.deliveryAddress.isNotEmpty()) { "deliveryAddress is required" }
                val state = checkNotNull(attribute<State>(STATE)) { "the archive has no state" }
                var current = mapInstance<Chunk>(CHUNKS, CURRENT) ?: Chunk()
                val subscriber = Subscriber(state.nextSequence, input.subscriberId, input.deliveryAddress)
                var latest = state.latestArchivedChunkToken
                if (current.subscribers.size >= CHUNK_SIZE) {
                    latest = token(current.subscribers.first().sequence)
                    setMapInstance(CHUNKS, latest, current)
                    current = Chunk(listOf(subscriber))
                } else {
                    current = Chunk(current.subscribers + subscriber)
                }
                setMapInstance(CHUNKS, CURRENT, current)
                setAttribute(STATE, State(state.nextSequence + 1, latest))
                subscriber
            }
            rpc<PageInput, Page>(GET_PAGE) { input ->
                val instance = chunkInstance(input.pageToken)
                val chunk = mapInstance<Chunk>(CHUNKS, instance)
                    ?: throw NoSuchElementException("subscriber page \"${input.pageToken}\" not found")
                val next = when {
                    chunk.subscribers.isEmpty() -> ""
                    instance == CURRENT -> attribute<State>(STATE)?.latestArchivedChunkToken.orEmpty()
                    else -> instance.toLong().let { if (it > 1) token(it - CHUNK_SIZE) else "" }
                }
                Page(instance, chunk.subscribers.reversed(), next)
            }
        }
    }

    /** Starts the archive with the initial values the built-in and Python flows start with. */
    fun start(store: Store, flowId: String): String = store.startFlow(
        TYPE,
        flowId,
        listOf(initialValue(STATE, value = State(1, "")), initialValue(CHUNKS, CURRENT, Chunk())),
        ignoreAlreadyStarted = true,
    )

    fun register(store: Store, flowId: String, n: Int, retry: RetryPolicy? = null): Subscriber {
        val id = "subscriber-%03d".format(n)
        val input = RegisterInput(id, "$id@example.com")
        return if (retry == null) {
            store.invoke(TYPE, flowId, REGISTER, input)
        } else {
            store.invokeWithRetry(TYPE, flowId, REGISTER, input, retry = retry)
        }
    }

    /** One page: the token's chunk is loaded for this call only. */
    fun page(store: Store, flowId: String, token: String): Page {
        val load = load(CHUNKS, if (token.isEmpty()) CURRENT else token)
        return store.invoke(TYPE, flowId, GET_PAGE, PageInput(token), InvokeOptions(loadMapInstances = listOf(load)))
    }

    fun allPages(store: Store, flowId: String): List<Page> {
        val pages = mutableListOf<Page>()
        var token = CURRENT
        while (token.isNotEmpty()) {
            pages += page(store, flowId, token).also { token = it.nextPageToken }
        }
        return pages
    }

    fun token(firstSequence: Long): String = firstSequence.toString().padStart(TOKEN_DIGITS, '0')

    private fun chunkInstance(token: String): String {
        if (token.isEmpty() || token == CURRENT) return CURRENT
        val first = token.takeIf { it.length == TOKEN_DIGITS && it.all(Char::isDigit) }?.toLong()
        require(first != null && first != 0L && (first - 1) % CHUNK_SIZE == 0L) { "invalid page token \"$token\"" }
        return token
    }
}
