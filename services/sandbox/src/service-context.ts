// What every handler of the module shares: the kit's service core (database once started,
// policy, page tokens, clock, a writer that wakes the outbox relay).
import type { Kysely, Transaction } from "kysely";
import type { AnyDatabase } from "@aiem/kit/db";
import type { ServiceCore } from "@aiem/kit/server";

export type Executor = Kysely<AnyDatabase> | Transaction<AnyDatabase>;

export type ServiceContext = ServiceCore;
