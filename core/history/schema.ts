/**
 * The history schema in ClickHouse SQL. Plain MergeTree-family DDL that runs
 * unchanged on chDB and on a ClickHouse server; every statement is idempotent
 * (CREATE ... IF NOT EXISTS), so a runner may apply the whole list at each start.
 *
 * Times are DateTime64(3, 'UTC'): epoch milliseconds in the port, no time zone
 * surprises in the database.
 */

/** Table names, shared by the DDL, the queries and the insert calls. */
export const HISTORY_TABLES = {
  messages: 'messages',
  events: 'message_events',
  applications: 'applications',
  optOuts: 'opt_outs',
  blockList: 'block_list',
  shortLinks: 'short_links',
  linkClicks: 'link_clicks',
  lists: 'lists',
  campaigns: 'campaigns',
  members: 'members',
  templates: 'templates',
  imTemplates: 'im_templates',
  contacts: 'contacts',
  campaignReport: 'campaign_report',
  campaignReportFromMessages: 'campaign_report_from_messages',
  campaignReportFromEvents: 'campaign_report_from_events',
  backfills: 'history_backfills',
  keyedImports: 'keyed_imports',
} as const;

/**
 * One row per accepted message. Looked up by id (the sorting key); partitions
 * by month of acceptance so the recovery scan prunes everything older than its
 * window, and old months can be dropped whole.
 *
 * index_granularity 1024 (instead of 8192) on both message tables: reads are
 * point lookups by key, and smaller granules cut what one lookup decompresses
 * (about a third off getMessage in chDB), for a primary index 8× larger —
 * ~40 MB per billion rows of UUID-sized keys.
 */
const MESSAGES = `
CREATE TABLE IF NOT EXISTS ${HISTORY_TABLES.messages}
(
    id             String,
    num_id         UInt64,
    application_id LowCardinality(String),
    channel        LowCardinality(String),
    direction      Enum8('MT' = 1, 'MO' = 2),
    destination    String,
    source         String,
    content        String CODEC(ZSTD(3)),
    reference      String,
    message_class  LowCardinality(String),
    mask           String,
    sms_class      Int32,
    scheduled_at   DateTime64(3, 'UTC'),
    integration_id String,
    via            LowCardinality(String),
    segments       UInt32,
    accepted_at    DateTime64(3, 'UTC')
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(accepted_at)
ORDER BY id
SETTINGS index_granularity = 1024`;

/**
 * Append-only status changes. The latest status of a message is the event with
 * the highest (stage, at): `stage` is `stageOf(status)` stored beside it, so
 * late or reordered arrivals never make a message look as if it went back.
 * Sorted by message so reading one message's events touches one range; the
 * bloom filter lets a delivery report find its message by carrier id without
 * reading every granule.
 */
const MESSAGE_EVENTS = `
CREATE TABLE IF NOT EXISTS ${HISTORY_TABLES.events}
(
    message_id     String,
    application_id LowCardinality(String),
    status         LowCardinality(String),
    stage          UInt8,
    at             DateTime64(3, 'UTC'),
    detail         String,
    carrier_id     String,
    error_code     LowCardinality(String),
    INDEX carrier_id_bloom carrier_id TYPE bloom_filter(0.01) GRANULARITY 1
)
ENGINE = MergeTree
ORDER BY (message_id, at)
SETTINGS index_granularity = 1024`;

/**
 * Applications, one live row per name: an upsert is an insert with a newer
 * `updated_at`, and reads use FINAL so they see only the newest version even
 * before a background merge has collapsed the older ones.
 */
const APPLICATIONS = `
CREATE TABLE IF NOT EXISTS ${HISTORY_TABLES.applications}
(
    id            String,
    name          String,
    password_hash String,
    api_key_hash  String,
    updated_at    DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(updated_at)
ORDER BY name`;

/** The latest opt-out state per application and handset (STOP / START replies, operators). */
const OPT_OUTS = `
CREATE TABLE IF NOT EXISTS ${HISTORY_TABLES.optOuts}
(
    application_id LowCardinality(String),
    handset        String,
    opted_out      UInt8,
    at             DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(at)
ORDER BY (application_id, handset)`;

/** Operators' block-list entries, the latest state per scope (application id, '' for all) and prefix. */
const BLOCK_LIST = `
CREATE TABLE IF NOT EXISTS ${HISTORY_TABLES.blockList}
(
    scope   LowCardinality(String),
    prefix  String,
    blocked UInt8,
    at      DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(at)
ORDER BY (scope, prefix)`;

/** Short links put into v2 message content, and every click on them. */
const SHORT_LINKS = `
CREATE TABLE IF NOT EXISTS ${HISTORY_TABLES.shortLinks}
(
    code           String,
    url            String,
    message_id     String,
    application_id LowCardinality(String),
    created_at     DateTime64(3, 'UTC')
)
ENGINE = MergeTree
ORDER BY code`;

const LINK_CLICKS = `
CREATE TABLE IF NOT EXISTS ${HISTORY_TABLES.linkClicks}
(
    code       String,
    at         DateTime64(3, 'UTC'),
    user_agent String,
    ip         String
)
ENGINE = MergeTree
ORDER BY (code, at)`;

/**
 * Campaign Manager lists, one live row per list: creating, and deleting (which
 * sets `deleted`), are inserts of a newer version; reads use FINAL.
 */
const LISTS = `
CREATE TABLE IF NOT EXISTS ${HISTORY_TABLES.lists}
(
    id              UInt64,
    application_id  LowCardinality(String),
    name            String,
    batch           String,
    email           String,
    remove_opt_outs UInt8,
    member_count    UInt32,
    created_at      DateTime64(3, 'UTC'),
    deleted         UInt8,
    updated_at      DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (application_id, id)`;

/** Scheduled campaigns, one live row per campaign (its state moves scheduled → sending → sent). */
const CAMPAIGNS = `
CREATE TABLE IF NOT EXISTS ${HISTORY_TABLES.campaigns}
(
    id                 UInt64,
    application_id     LowCardinality(String),
    name               String,
    batch              String,
    email              String,
    schedule_at        DateTime64(3, 'UTC'),
    utc_offset_minutes Int16,
    content            String,
    template           String,
    mask               String,
    opt_out_response   String,
    reply_response     String,
    remove_opt_outs    UInt8,
    member_count       UInt32,
    removed_opt_outs   UInt32,
    numeric_base       UInt64,
    state              LowCardinality(String),
    created_at         DateTime64(3, 'UTC'),
    updated_at         DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (application_id, id)`;

/**
 * Members of lists and campaigns (owner_id is the list or campaign id; the two
 * share one id space). Written in inserts of many thousand rows, read in
 * position ranges through the sorting key.
 */
const MEMBERS = `
CREATE TABLE IF NOT EXISTS ${HISTORY_TABLES.members}
(
    owner_id    UInt64,
    position    UInt32,
    destination String,
    param1      String,
    param2      String,
    param3      String,
    param4      String,
    param5      String,
    param6      String,
    opted_out   UInt8
)
ENGINE = MergeTree
ORDER BY (owner_id, position)`;

/** Message templates of an application, managed by operators; one live row per name. */
const TEMPLATES = `
CREATE TABLE IF NOT EXISTS ${HISTORY_TABLES.templates}
(
    id             UInt64,
    application_id LowCardinality(String),
    name           String,
    content        String,
    updated_at     DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (application_id, name)`;

/** Intelligent Messaging templates (by UUID) and contacts of an application; one live row each. */
const IM_TEMPLATES = `
CREATE TABLE IF NOT EXISTS ${HISTORY_TABLES.imTemplates}
(
    application_id LowCardinality(String),
    id             String,
    name           String,
    language       String,
    body           String,
    updated_at     DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (application_id, id)`;

const CONTACTS = `
CREATE TABLE IF NOT EXISTS ${HISTORY_TABLES.contacts}
(
    application_id LowCardinality(String),
    contact_id     String,
    mobile         String,
    email          String,
    whatsapp_id    String,
    updated_at     DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (application_id, contact_id)`;

/**
 * Lists and campaigns created by a request with an Idempotency-Key, with the
 * answer they got, by the key the gateway derived from the key and the body;
 * kept as long as keys are (two days, past the default 24 h).
 */
const KEYED_IMPORTS = `
CREATE TABLE IF NOT EXISTS ${HISTORY_TABLES.keyedImports}
(
    application_id LowCardinality(String),
    dedup_key      String,
    kind           LowCardinality(String),
    id             UInt64,
    error_messages String,
    members        UInt32,
    opted_out      UInt32,
    at             DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(at)
ORDER BY (application_id, dedup_key)
TTL toDateTime(at) + INTERVAL 2 DAY`;

/**
 * A campaign message id (campaign-message-ids.ts), as a cheap test on the
 * fixed characters of its layout: version 8, variant `8000-0000`. Other
 * messages have version-4 UUIDs.
 */
const isCampaignMessage = (column: string): string => `substring(${column}, 15, 1) = '8' AND substring(${column}, 20, 9) = '8000-0000'`;

/**
 * One row per campaign message for the campaign report: what the report
 * shows of the message and of its status events, kept up to date by the two
 * materialized views below as rows are inserted. Every column is a
 * SimpleAggregateFunction of max or min, so rows of the same message (its
 * message row, each status event, a resumed fan-out storing the message
 * again, a backfill run twice) collapse into the same answer in whatever
 * order and however often they arrive. Read with FINAL, so parts not yet
 * merged still give one row per message.
 *
 * `latest` is the status with the highest (stage, at), as the events table
 * defines it; `sent_at` the first time it reached the carrier connection
 * (NULL until then); `accepted_at` is NULL on a row that has only events.
 */
const CAMPAIGN_REPORT = `
CREATE TABLE IF NOT EXISTS ${HISTORY_TABLES.campaignReport}
(
    message_id  String,
    num_id      SimpleAggregateFunction(max, UInt64),
    destination SimpleAggregateFunction(max, String),
    accepted_at SimpleAggregateFunction(min, Nullable(DateTime64(3, 'UTC'))),
    latest      SimpleAggregateFunction(max, Tuple(UInt8, DateTime64(3, 'UTC'), String)),
    sent_at     SimpleAggregateFunction(min, Nullable(DateTime64(3, 'UTC')))
)
ENGINE = AggregatingMergeTree
ORDER BY message_id`;

/** What a campaign message row adds to its report row (the view's query, and the backfill's). */
const REPORT_FROM_MESSAGES = `
SELECT id AS message_id, num_id, destination, accepted_at
FROM ${HISTORY_TABLES.messages}
WHERE ${isCampaignMessage('id')}`;

/** What a campaign message's status event adds to its report row. */
const REPORT_FROM_EVENTS = `
SELECT
    message_id,
    (stage, at, toString(status))                        AS latest,
    if(status IN ('sent', 'submitted'), at, NULL)        AS sent_at
FROM ${HISTORY_TABLES.events}
WHERE ${isCampaignMessage('message_id')}`;

const CAMPAIGN_REPORT_FROM_MESSAGES = `
CREATE MATERIALIZED VIEW IF NOT EXISTS ${HISTORY_TABLES.campaignReportFromMessages}
TO ${HISTORY_TABLES.campaignReport} AS ${REPORT_FROM_MESSAGES}`;

const CAMPAIGN_REPORT_FROM_EVENTS = `
CREATE MATERIALIZED VIEW IF NOT EXISTS ${HISTORY_TABLES.campaignReportFromEvents}
TO ${HISTORY_TABLES.campaignReport} AS ${REPORT_FROM_EVENTS}`;

/** Which backfills have run to the end (a row per name). */
const BACKFILLS = `
CREATE TABLE IF NOT EXISTS ${HISTORY_TABLES.backfills}
(
    name    String,
    done_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(done_at)
ORDER BY name`;

export interface HistoryBackfill {
  readonly name: string;
  /** Idempotent statements: a backfill cut short runs again in full at the next start. */
  readonly statements: readonly string[];
}

/**
 * Data that tables added later derive from older ones, filled once per
 * database after the schema is applied (its views already feed the new table,
 * so nothing inserted from then on is missed), then recorded in
 * history_backfills. A database created by this version has nothing to copy.
 */
export const HISTORY_BACKFILLS: readonly HistoryBackfill[] = [
  {
    name: 'campaign_report',
    statements: [
      `INSERT INTO ${HISTORY_TABLES.campaignReport} (message_id, num_id, destination, accepted_at) ${REPORT_FROM_MESSAGES}`,
      `INSERT INTO ${HISTORY_TABLES.campaignReport} (message_id, latest, sent_at) ${REPORT_FROM_EVENTS}`,
    ],
  },
];

/** Params: name String. */
export const BACKFILL_DONE = `SELECT count() AS done FROM ${HISTORY_TABLES.backfills} WHERE name = {name:String}`;
export const RECORD_BACKFILL = `INSERT INTO ${HISTORY_TABLES.backfills} (name, done_at) SELECT {name:String}, now64(3)`;

/** Migrations of tables created by earlier versions; each is idempotent. */
const MIGRATIONS = [
  `ALTER TABLE ${HISTORY_TABLES.applications} ADD COLUMN IF NOT EXISTS status_callback_url String`,
  `ALTER TABLE ${HISTORY_TABLES.applications} ADD COLUMN IF NOT EXISTS reply_callback_url String`,
  `ALTER TABLE ${HISTORY_TABLES.applications} ADD COLUMN IF NOT EXISTS callback_secret String`,
  `ALTER TABLE ${HISTORY_TABLES.messages} ADD COLUMN IF NOT EXISTS reply_to String`,
  `ALTER TABLE ${HISTORY_TABLES.applications} ADD COLUMN IF NOT EXISTS im_status_callback_url String`,
  `ALTER TABLE ${HISTORY_TABLES.applications} ADD COLUMN IF NOT EXISTS im_default_attempts String`,
  `ALTER TABLE ${HISTORY_TABLES.messages} ADD COLUMN IF NOT EXISTS num_id UInt64 AFTER id`,
  // Numeric ids grow with time, as parts do: a min/max index skips almost every granule.
  `ALTER TABLE ${HISTORY_TABLES.messages} ADD INDEX IF NOT EXISTS num_id_minmax num_id TYPE minmax GRANULARITY 1`,
  `ALTER TABLE ${HISTORY_TABLES.messages} ADD COLUMN IF NOT EXISTS reply_route LowCardinality(String)`,
  `ALTER TABLE ${HISTORY_TABLES.applications} ADD COLUMN IF NOT EXISTS source_addresses Array(String)`,
  // -1: the service default (HERMOD_IM_RATE_LIMIT).
  `ALTER TABLE ${HISTORY_TABLES.applications} ADD COLUMN IF NOT EXISTS im_rate_limit Int32 DEFAULT -1`,
  // 0: no quota.
  `ALTER TABLE ${HISTORY_TABLES.applications} ADD COLUMN IF NOT EXISTS quota_messages UInt64 DEFAULT 0`,
  `ALTER TABLE ${HISTORY_TABLES.applications} ADD COLUMN IF NOT EXISTS quota_period LowCardinality(String)`,
  // 0 for campaigns written before it: their members count still includes the opted-out members removed at import.
  `ALTER TABLE ${HISTORY_TABLES.campaigns} ADD COLUMN IF NOT EXISTS removed_opt_outs UInt32 AFTER member_count`,
  // A callback secret replaced with an overlap keeps signing until then (the epoch: it does not).
  `ALTER TABLE ${HISTORY_TABLES.applications} ADD COLUMN IF NOT EXISTS previous_callback_secret String`,
  `ALTER TABLE ${HISTORY_TABLES.applications} ADD COLUMN IF NOT EXISTS previous_callback_secret_until DateTime64(3, 'UTC')`,
];

/** Every DDL statement, in the order a migration runner applies them. */
export const HISTORY_SCHEMA: readonly string[] = [
  MESSAGES,
  MESSAGE_EVENTS,
  APPLICATIONS,
  OPT_OUTS,
  BLOCK_LIST,
  SHORT_LINKS,
  LINK_CLICKS,
  LISTS,
  CAMPAIGNS,
  MEMBERS,
  TEMPLATES,
  IM_TEMPLATES,
  CONTACTS,
  KEYED_IMPORTS,
  ...MIGRATIONS,
  CAMPAIGN_REPORT,
  CAMPAIGN_REPORT_FROM_MESSAGES,
  CAMPAIGN_REPORT_FROM_EVENTS,
  BACKFILLS,
];
