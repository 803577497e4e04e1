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
  ...MIGRATIONS,
];
