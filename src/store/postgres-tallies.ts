/**
 * The triggers that keep PostgreSQL's tallies: a collection's row count
 * (row-counts.ts) and its counts per value of a boolean or enum column
 * (value-counts.ts), in the writing transaction, whoever writes.
 *
 * - Inserts and deletes are counted by statement triggers over the transition
 *   table: one tally update per statement, however many rows it changed (a
 *   cascade deletes a project's tasks in one statement). PostgreSQL walks
 *   every earlier version a transaction made of a row each time it updates
 *   that row again, so a row trigger took 87 s for 100,000 rows inserted in
 *   one statement.
 * - Each tally is spread over TALLY_SHARDS rows and each statement adds to
 *   one, picked by a hash of its transaction and its start (a row trigger
 *   fires once per row, and picks the same shard each time, for a tenth of
 *   a second), so concurrent writers rarely wait for one another's row lock. One shard per
 *   transaction made 20,000 single-row statements in one transaction 3 times
 *   slower (the same version walk).
 * - An update that changes a counted value is counted by a row trigger, the
 *   only kind that can be narrowed to `UPDATE OF column ... WHEN` the value
 *   changed: a statement trigger with transition tables fires on every
 *   UPDATE, and cost a PATCH of another column 13 % of its throughput in a
 *   pgbench run, while this one costs it nothing.
 * - Functions fix their search path at creation, so that a write through
 *   another search path still updates this schema's tallies.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { Database } from './dialect.js'
import { fitName, POSTGRES_MAX_NAME_BYTES } from './identifiers.js'
import { ROW_COUNTS_TABLE } from './row-counts.js'
import { tallyTriggers } from './tally-triggers.js'
import { VALUE_COUNTS_TABLE } from './value-counts.js'

/** Function and trigger names hold a table's and a column's names, which together can run past what PostgreSQL keeps. */
const named = (name: string): string => fitName(name, POSTGRES_MAX_NAME_BYTES)

/** Rows per tally: each statement adds to one of them, so few concurrent writers share a row lock. */
export const TALLY_SHARDS = 64

/** A tally's trigger function: its body may use `picked`, the shard this firing adds to. */
interface TallyFunction {
  readonly name: string
  readonly body: RawBuilder<unknown>
  readonly declarations?: RawBuilder<unknown>
}

/**
 * The statement that creates (or replaces) `fn` in `schema`. `picked` is a
 * hash of the statement (its transaction and its start) and of the tenth of
 * a second it is in, so that a statement that changes a counted value of
 * many rows (a turn's edits, gathered: a few milliseconds) locks one shard
 * of each tally. Picked at random per row, two such statements each locked
 * a score of shards in random orders, and deadlocked: PostgreSQL broke each
 * after a second (deadlock_timeout), and 50 clients setting tasks' status
 * got 180–750 answers a second with a p99 over a second. The tenth of a
 * second is for a statement that runs much longer (a script's bulk UPDATE):
 * PostgreSQL walks every version a transaction made of a row each time it
 * updates it again, and 32,000 rows on one shard took 9.2 s, against 1.7 s
 * moving on to another shard each tenth of a second (3.1 s picking per row).
 */
function definition (schema: string, { name, body, declarations = sql.raw('') }: TallyFunction): RawBuilder<unknown> {
  return sql`create or replace function ${sql.id(named(name))}() returns trigger language plpgsql
    set search_path = ${sql.id(schema)} as $$
    declare
      picked integer := abs(hashtextextended(txid_current()::text || ' ' || statement_timestamp()::text || ' '
        || floor(extract(epoch from clock_timestamp()) * 10)::text, 0) % ${sql.lit(TALLY_SHARDS)});
      ${declarations}
    begin
      ${body}
      return null;
    end $$`
}

async function currentSchema (trx: Kysely<Database>): Promise<string> {
  return (await sql<{ schema: string }>`select current_schema() as schema`.execute(trx)).rows[0]!.schema
}

/** Creates (or replaces) `fn`, fixing its search path to this schema's. */
async function tallyFunction (trx: Kysely<Database>, fn: TallyFunction): Promise<void> {
  await definition(await currentSchema(trx), fn).execute(trx)
}

/** What PostgreSQL made of a name longer than it keeps, before names were fitted: its first 63 bytes (derived names are ASCII). */
const cut = (name: string): string => name.slice(0, POSTGRES_MAX_NAME_BYTES)

/**
 * (Re)creates trigger `name` on `table`: `after <when> on <table> <how> execute function fn()`.
 * A trigger an older version left under the cut name goes too: it would count every row a second time.
 */
async function replaceTrigger (trx: Kysely<Database>, table: string, name: string, when: RawBuilder<unknown>, how: RawBuilder<unknown>, fn: string): Promise<void> {
  if (cut(name) !== named(name)) await sql`drop trigger if exists ${sql.id(cut(name))} on ${sql.table(table)}`.execute(trx)
  await sql`drop trigger if exists ${sql.id(named(name))} on ${sql.table(table)}`.execute(trx)
  await sql`create trigger ${sql.id(named(name))} after ${when} on ${sql.table(table)} ${how} execute function ${sql.id(named(fn))}()`.execute(trx)
}

/** Statement triggers `inserts` and `deletes` on `table`, over the transition table `changed_rows`. */
async function onInsertsAndDeletes (trx: Kysely<Database>, table: string, [inserts, deletes]: readonly string[], fn: string): Promise<void> {
  for (const [name, event, transition] of [[inserts!, 'insert', 'new'], [deletes!, 'delete', 'old']] as const) {
    await replaceTrigger(trx, table, name, sql.raw(event), sql`referencing ${sql.raw(transition)} table as changed_rows for each statement`, fn)
  }
}

/** The one function of every collection's row count. A statement that changed nothing takes no lock. */
const ROW_COUNT: TallyFunction = {
  name: 'resourcery_count_rows',
  body: sql`
    select count(*) into changed from changed_rows;
    if changed > 0 then
      update ${sql.table(ROW_COUNTS_TABLE)} set total = total + case tg_op when 'DELETE' then -changed else changed end
        where collection = tg_table_name and shard = picked;
    end if;`,
  declarations: sql`changed bigint;`
}

export async function keepRowCounts (trx: Kysely<Database>, tables: readonly string[]): Promise<void> {
  await tallyFunction(trx, ROW_COUNT)
  for (const table of tables) await onInsertsAndDeletes(trx, table, tallyTriggers(table), ROW_COUNT.name)
}

/** Adds `delta` rows to the count of each value, in the order of the values, so that two writers lock tally rows in the same order. */
function addToValueCounts (table: string, column: string, changes: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`insert into ${sql.table(VALUE_COUNTS_TABLE)} (collection, field, value, shard, total)
      select ${sql.lit(table)}, ${sql.lit(column)}, value, picked, sum(delta) from (${changes}) as changes (value, delta)
      where value is not null group by value order by value
      on conflict (collection, field, value, shard) do update set total = ${sql.table(VALUE_COUNTS_TABLE)}.total + excluded.total;`
}

/** The functions of one column's value counts: rows inserted and deleted (`counted`), and values changed (`changed`). */
function valueCountFunctions (table: string, column: string): { counted: TallyFunction, changed: TallyFunction } {
  const value = (row: string): RawBuilder<unknown> => sql`cast(${sql.raw(row)}.${sql.id(column)} as text)`
  return {
    counted: {
      name: `resourcery_count_${table}_${column}`,
      body: addToValueCounts(table, column, sql`select ${value('changed_rows')}, case tg_op when 'DELETE' then -1 else 1 end from changed_rows`)
    },
    changed: {
      name: `resourcery_count_${table}_${column}_changes`,
      body: addToValueCounts(table, column, sql`values (${value('old')}, -1), (${value('new')}, 1)`)
    }
  }
}

export async function keepValueCounts (trx: Kysely<Database>, table: string, column: string): Promise<void> {
  const { counted, changed } = valueCountFunctions(table, column)
  const [inserts, deletes, updates] = tallyTriggers(table, column) as [string, string, string]
  await tallyFunction(trx, counted)
  await onInsertsAndDeletes(trx, table, [inserts, deletes], counted.name)
  await tallyFunction(trx, changed)
  await replaceTrigger(trx, table, updates, sql`update of ${sql.id(column)}`,
    sql`for each row when (old.${sql.id(column)} is distinct from new.${sql.id(column)})`, changed.name)
}

/**
 * Replaces each function of the tallies kept (`tables`' row counts,
 * `columns`' value counts) whose source is not the one this version writes:
 * an older version's. Their triggers stay, and the counts with them. Names
 * the functions replaced.
 */
export async function renewTallyFunctions (trx: Kysely<Database>, tables: readonly string[], columns: ReadonlyArray<readonly [table: string, column: string]>): Promise<string[]> {
  const schema = await currentSchema(trx)
  const { rows } = await sql<{ name: string, source: string }>`select proname as name, prosrc as source from pg_proc
    where pronamespace = current_schema()::regnamespace and proname like 'resourcery\_count\_%'`.execute(trx)
  const sources = new Map(rows.map(row => [row.name, row.source]))
  const kept = [...tables.length > 0 ? [ROW_COUNT] : [], ...columns.flatMap(([table, column]) => Object.values(valueCountFunctions(table, column)))]
  const renewed: string[] = []
  for (const fn of kept) {
    const statement = definition(schema, fn)
    const { sql: text } = statement.compile(trx)
    const current = sources.get(named(fn.name))
    // The source is what stands between the dollar quotes; a function not there yet is its tally's to create.
    if (current === undefined || current === text.slice(text.indexOf('$$') + 2, text.lastIndexOf('$$'))) continue
    await statement.execute(trx)
    renewed.push(`renew tally function ${named(fn.name)}`)
  }
  return renewed
}
