import { createRequire } from 'node:module';
import type { AllStreamResolvedEvent, EventStoreDBClient, Filter, ReadPosition } from '@eventstore/db-client';

/**
 * A count-bounded read of $all filtered by the server. The server has taken a filter on $all
 * reads since 20.6 (the gRPC ReadReq's `filter` option: it pages through the log itself,
 * `maxSearchWindow` events at a time, and answers at most `count` matching events, ending at the
 * end of the log), but the v6 Node client only offers the filter on subscriptions: its readAll
 * always sends "no filter". This builds the same request with the filter set and runs it over the
 * client's own channel (leader discovery, TLS, credentials, deadlines), so that waits, status
 * and rebuilds no longer pull every event of $all to this process to throw most of them away.
 *
 * It reaches into the client's published files (generated protobuf classes, its read stream);
 * @eventstore/db-client 6.2.1 is the last release of that package and is pinned exactly.
 */
const require = createRequire(import.meta.url);

type Message = { setOptions(o: unknown): void };
type StreamsPb = {
  ReadReq: (new () => Message & { getOptions(): unknown }) & { Options: OptionsCtor };
};
type OptionsCtor = (new () => Record<string, (...args: unknown[]) => unknown>) & {
  UUIDOption: new () => Record<string, (...args: unknown[]) => unknown>;
  AllOptions: new () => Record<string, (...args: unknown[]) => unknown>;
  Position: new () => Record<string, (...args: unknown[]) => unknown>;
  FilterOptions: (new () => Record<string, (...args: unknown[]) => unknown>) & { Expression: new () => Record<string, (...args: unknown[]) => unknown> };
};

const streamsPb = require('@eventstore/db-client/generated/streams_pb.js') as StreamsPb;
const sharedPb = require('@eventstore/db-client/generated/shared_pb.js') as { Empty: new () => unknown };
const streamsGrpc = require('@eventstore/db-client/generated/streams_grpc_pb.js') as { StreamsClient: unknown };
const { ReadStream } = require('@eventstore/db-client/dist/streams/utils/ReadStream.js') as {
  ReadStream: new (create: () => Promise<unknown>, convert: unknown, options: Record<string, never>) => AsyncIterable<AllStreamResolvedEvent>;
};
const { convertGrpcEvent } = require('@eventstore/db-client/dist/utils/index.js') as { convertGrpcEvent: unknown };

/** Events the server looks at per internal page while it searches for matches. */
export const MAX_SEARCH_WINDOW = 2048;

export type FilteredReadRequest = { fromPosition: ReadPosition; maxCount: number; filter: Filter };

/** The gRPC request of a forwards $all read with a server-side filter (exported for the request tests). */
export function buildFilteredReadAllRequest({ fromPosition, maxCount, filter }: FilteredReadRequest): Message & { getOptions(): unknown } {
  if (!Number.isSafeInteger(maxCount) || maxCount <= 0) throw new RangeError(`maxCount must be a positive integer, got ${maxCount}`);
  const { Options } = streamsPb.ReadReq;
  const req = new streamsPb.ReadReq();
  const options = new Options();
  const uuid = new Options.UUIDOption();
  uuid.setString!(new sharedPb.Empty());
  const all = new Options.AllOptions();
  if (fromPosition === 'start') all.setStart!(new sharedPb.Empty());
  else if (fromPosition === 'end') all.setEnd!(new sharedPb.Empty());
  else {
    const pos = new Options.Position();
    pos.setCommitPosition!(fromPosition.commit.toString(10));
    pos.setPreparePosition!(fromPosition.prepare.toString(10));
    all.setPosition!(pos);
  }
  options.setAll!(all);
  options.setResolveLinks!(false);
  options.setCount!(String(maxCount));
  options.setUuidOption!(uuid);
  options.setReadDirection!(0);
  const expr = new Options.FilterOptions.Expression();
  if ('prefixes' in filter) expr.setPrefixList!(filter.prefixes);
  if ('regex' in filter) expr.setRegex!(filter.regex);
  const filterOptions = new Options.FilterOptions();
  if (filter.filterOn === 'streamName') filterOptions.setStreamIdentifier!(expr);
  else filterOptions.setEventType!(expr);
  filterOptions.setMax!(filter.maxSearchWindow ?? MAX_SEARCH_WINDOW);
  filterOptions.setCheckpointintervalmultiplier!(filter.checkpointInterval);
  options.setFilter!(filterOptions);
  req.setOptions(options);
  return req;
}

type ClientInternals = {
  GRPCStreamCreator: (client: unknown, name: string, create: (grpc: { read: (req: unknown, ...args: unknown[]) => unknown }) => unknown) => () => Promise<unknown>;
  callArguments: (base: Record<string, unknown>, call: Record<string, unknown>) => unknown[];
};

/** Runs the filtered read: matching events after the server's filter, in $all order. */
export async function readAllFiltered(client: EventStoreDBClient, request: FilteredReadRequest): Promise<AllStreamResolvedEvent[]> {
  const req = buildFilteredReadAllRequest(request);
  const internals = client as unknown as ClientInternals;
  const create = internals.GRPCStreamCreator(streamsGrpc.StreamsClient, 'readAllFiltered', (grpc) =>
    grpc.read(req, ...internals.callArguments({}, { deadline: Infinity })),
  );
  const out: AllStreamResolvedEvent[] = [];
  for await (const resolved of new ReadStream(create, convertGrpcEvent, {})) out.push(resolved);
  return out;
}
