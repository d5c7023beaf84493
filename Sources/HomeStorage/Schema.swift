/// The database's tables, built by numbered migrations.
///
/// The schema version is SQLite's `PRAGMA user_version`: the number of the last
/// migration applied, set in the same transaction as the migration itself, so a
/// crash leaves a file at one version or the next, never between. A file whose
/// version is above `Schema.version` was written by a newer homed and is refused.
///
/// Every file homed writes also carries `PRAGMA application_id` =
/// `Schema.applicationID`, so a SQLite database of another program is recognised
/// and refused rather than migrated.
///
/// Conventions of the tables:
/// - Ids are the model's `ObjectID`s, stored with the same bits as signed integers.
/// - Every table mirrors one model type; child lists (a home's rooms, a service's
///   characteristics) are the children's `position` column, many-to-many lists
///   (a zone's rooms, a group's services) are link tables with a `position`.
/// - Positions are sparse: a child's position is its id unless that would break
///   the list's order (see `LayoutDiff.positions`), so adding or removing one child
///   leaves its siblings' rows alone.
/// - A value is two columns: `value_type` (bool, int, uint, float, string, data;
///   NULL for no value) and `value` (`ANY`: an integer, a real, text or a blob).
/// - Foreign keys are checked at commit (`DEFERRABLE INITIALLY DEFERRED`), so one
///   transaction may write parents and children in any order; a link row goes
///   with its owner (`ON DELETE CASCADE`).
enum Schema {
    /// The newest schema this build knows.
    static var version: Int { migrations.count }

    /// "homd": marks a SQLite file as homed's.
    static let applicationID: Int64 = 0x686F_6D64

    struct Migration {
        /// Applied to a file at `version - 1`.
        var version: Int
        var sql: String
    }

    /// Every migration, in order: migration n takes a file from version n-1 to n.
    /// Never edit one that has shipped; add the next.
    static let migrations: [Migration] = [
        Migration(version: 1, sql: createTables),
        Migration(version: 2, sql: providerKeys),
        Migration(version: 3, sql: valueLog),
        Migration(version: 4, sql: journal),
        Migration(version: 5, sql: rollups),
        Migration(version: 6, sql: actionConditions),
        Migration(version: 7, sql: triggerTiming),
    ]

    /// Where a home is (for the sun's times), and when a trigger may fire.
    ///
    /// A sun trigger is a row of kind 'timer' with `sun` set ('sunrise', 'sunset'):
    /// the first migration's CHECK allows only 'timer' and 'event', and SQLite
    /// cannot change a CHECK without rebuilding the table, whose removal would
    /// cascade to the triggers' links. `days` is the condition's days (bit 0
    /// Monday … bit 6 Sunday, 127 every day); `window_from`/`window_to` are "clock
    /// MS" (ms after local midnight) or "sunrise MS"/"sunset MS" (an offset).
    /// `command_arguments` holds each argument as its UTF-8 length, ":" and the
    /// argument ("5:hello3:you"), so any argument reads back as it was.
    private static let triggerTiming = """
        ALTER TABLE homes ADD COLUMN latitude REAL;
        ALTER TABLE homes ADD COLUMN longitude REAL;
        ALTER TABLE triggers ADD COLUMN sun TEXT;
        ALTER TABLE triggers ADD COLUMN sun_offset_ms INTEGER;
        ALTER TABLE triggers ADD COLUMN hold_ms INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE triggers ADD COLUMN days INTEGER NOT NULL DEFAULT 127;
        ALTER TABLE triggers ADD COLUMN window_from TEXT;
        ALTER TABLE triggers ADD COLUMN window_to TEXT;
        ALTER TABLE triggers ADD COLUMN condition_time_zone TEXT;
        ALTER TABLE triggers ADD COLUMN execute_once INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE triggers ADD COLUMN end_after_ms INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE triggers ADD COLUMN end_when_event_ends INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE triggers ADD COLUMN command_program TEXT;
        ALTER TABLE triggers ADD COLUMN command_arguments TEXT;
        ALTER TABLE triggers ADD COLUMN command_timeout_ms INTEGER;
        """

    /// A scene's action may be conditional: it writes only if the characteristic
    /// holds `only_if` when the scene runs (NULL: always).
    private static let actionConditions = """
        ALTER TABLE actions ADD COLUMN only_if_type TEXT;
        ALTER TABLE actions ADD COLUMN only_if ANY;
        """

    /// Rollups: each numeric characteristic's values per 5 minutes and per hour
    /// (count, min, max, sum, last), folded from the journal by the daemon up to
    /// `meta.rollup_seq`, and kept longer than the events.
    private static let rollups = """
        CREATE TABLE rollups (
            characteristic_id INTEGER NOT NULL,
            width_ms INTEGER NOT NULL,
            start_ms INTEGER NOT NULL,
            count INTEGER NOT NULL,
            min REAL NOT NULL,
            max REAL NOT NULL,
            sum REAL NOT NULL,
            last REAL NOT NULL,
            last_ms INTEGER NOT NULL,
            PRIMARY KEY (characteristic_id, width_ms, start_ms)
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX rollups_by_start ON rollups (start_ms);
        """

    /// The journal: every committed event, one row per commit, appended before
    /// anyone hears of them and kept until `keep_until_ms` (the longest retention
    /// of its events). `seq` is the commit's first event's sequence number, the
    /// others follow it; `events` is a `JournalRecord`. The id of the journal the
    /// rows belong to is `meta.journal_id`.
    private static let journal = """
        CREATE TABLE journal (
            seq INTEGER PRIMARY KEY,
            last_seq INTEGER NOT NULL,
            time_ms INTEGER NOT NULL,
            keep_until_ms INTEGER NOT NULL,
            events BLOB NOT NULL
        ) STRICT;
        CREATE INDEX journal_by_time ON journal (time_ms);
        CREATE INDEX journal_by_expiry ON journal (keep_until_ms);

        -- What each commit is about: the ids of its events' characteristics,
        -- services, accessories, and of the objects, homes and parents of its layout
        -- changes, each once per commit. "The last change of X" and "X between t0
        -- and t1" read these instead of every commit.
        CREATE TABLE journal_subjects (
            subject_id INTEGER NOT NULL,
            commit_seq INTEGER NOT NULL,
            PRIMARY KEY (subject_id, commit_seq)
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX journal_subjects_by_commit ON journal_subjects (commit_seq);
        """

    /// The value log: one row per commit that changed values, appended before the
    /// change is acknowledged and emptied when its values are folded into the
    /// characteristics' rows. `changes` is a `ValueLogRecord`; `time_ms` is the
    /// commit's time, which every value in it takes as its last update.
    private static let valueLog = """
        CREATE TABLE value_log (
            id INTEGER PRIMARY KEY,
            time_ms INTEGER NOT NULL,
            changes BLOB NOT NULL
        ) STRICT;
        """

    /// Accessory providers: the provider's own key of each accessory (unique per
    /// provider) and of each service. The demo's accessories, the only ones a
    /// version-1 file can hold, take their serial number as key, which is the key
    /// the simulator registers them with.
    private static let providerKeys = """
        ALTER TABLE accessories ADD COLUMN provider_key TEXT NOT NULL DEFAULT '';
        UPDATE accessories SET provider_key = serial_number WHERE provider != '' AND serial_number != '';
        UPDATE accessories SET provider_key = 'id:' || id WHERE provider != '' AND provider_key = '';
        CREATE UNIQUE INDEX accessories_by_provider_key ON accessories (provider, provider_key)
            WHERE provider_key != '';
        ALTER TABLE services ADD COLUMN provider_key TEXT NOT NULL DEFAULT '';
        """

    private static let createTables = """
        CREATE TABLE meta (
            key TEXT PRIMARY KEY,
            value ANY
        ) STRICT, WITHOUT ROWID;
        INSERT INTO meta (key, value) VALUES ('next_id', 1);

        CREATE TABLE homes (
            id INTEGER PRIMARY KEY,
            position INTEGER NOT NULL,
            name TEXT NOT NULL,
            is_primary INTEGER NOT NULL,
            default_room_id INTEGER NOT NULL REFERENCES rooms (id) DEFERRABLE INITIALLY DEFERRED
        ) STRICT;

        CREATE TABLE rooms (
            id INTEGER PRIMARY KEY,
            home_id INTEGER NOT NULL REFERENCES homes (id) DEFERRABLE INITIALLY DEFERRED,
            position INTEGER NOT NULL,
            name TEXT NOT NULL
        ) STRICT;
        CREATE INDEX rooms_by_home ON rooms (home_id, position);

        CREATE TABLE zones (
            id INTEGER PRIMARY KEY,
            home_id INTEGER NOT NULL REFERENCES homes (id) DEFERRABLE INITIALLY DEFERRED,
            position INTEGER NOT NULL,
            name TEXT NOT NULL
        ) STRICT;
        CREATE INDEX zones_by_home ON zones (home_id, position);

        CREATE TABLE zone_rooms (
            zone_id INTEGER NOT NULL REFERENCES zones (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
            position INTEGER NOT NULL,
            room_id INTEGER NOT NULL REFERENCES rooms (id) DEFERRABLE INITIALLY DEFERRED,
            PRIMARY KEY (zone_id, position)
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX zone_rooms_by_room ON zone_rooms (room_id);

        CREATE TABLE accessories (
            id INTEGER PRIMARY KEY,
            home_id INTEGER NOT NULL REFERENCES homes (id) DEFERRABLE INITIALLY DEFERRED,
            position INTEGER NOT NULL,
            room_id INTEGER NOT NULL REFERENCES rooms (id) DEFERRABLE INITIALLY DEFERRED,
            name TEXT NOT NULL,
            category INTEGER NOT NULL,
            manufacturer TEXT NOT NULL,
            model TEXT NOT NULL,
            serial_number TEXT NOT NULL,
            firmware_revision TEXT NOT NULL,
            is_reachable INTEGER NOT NULL,
            bridge_id INTEGER REFERENCES accessories (id) DEFERRABLE INITIALLY DEFERRED,
            bridge_position INTEGER,
            provider TEXT NOT NULL
        ) STRICT;
        CREATE INDEX accessories_by_home ON accessories (home_id, position);
        CREATE INDEX accessories_by_room ON accessories (room_id);
        CREATE INDEX accessories_by_bridge ON accessories (bridge_id, bridge_position);

        CREATE TABLE services (
            id INTEGER PRIMARY KEY,
            accessory_id INTEGER NOT NULL REFERENCES accessories (id) DEFERRABLE INITIALLY DEFERRED,
            position INTEGER NOT NULL,
            type_uuid TEXT NOT NULL,
            type_name TEXT NOT NULL,
            name TEXT NOT NULL,
            is_primary INTEGER NOT NULL,
            is_user_interactive INTEGER NOT NULL,
            is_hidden INTEGER NOT NULL
        ) STRICT;
        CREATE INDEX services_by_accessory ON services (accessory_id, position);

        CREATE TABLE service_links (
            service_id INTEGER NOT NULL REFERENCES services (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
            position INTEGER NOT NULL,
            linked_service_id INTEGER NOT NULL REFERENCES services (id) DEFERRABLE INITIALLY DEFERRED,
            PRIMARY KEY (service_id, position)
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX service_links_by_linked ON service_links (linked_service_id);

        CREATE TABLE characteristics (
            id INTEGER PRIMARY KEY,
            service_id INTEGER NOT NULL REFERENCES services (id) DEFERRABLE INITIALLY DEFERRED,
            accessory_id INTEGER NOT NULL REFERENCES accessories (id) DEFERRABLE INITIALLY DEFERRED,
            position INTEGER NOT NULL,
            type_uuid TEXT NOT NULL,
            type_name TEXT NOT NULL,
            readable INTEGER NOT NULL,
            writable INTEGER NOT NULL,
            supports_event_notification INTEGER NOT NULL,
            hidden INTEGER NOT NULL,
            write_response INTEGER NOT NULL,
            format TEXT NOT NULL,
            unit TEXT NOT NULL,
            min_value REAL,
            max_value REAL,
            min_step REAL,
            -- A JSON array of integers, "[]" for any value in range.
            valid_values TEXT NOT NULL,
            valid_bits INTEGER NOT NULL,
            max_length INTEGER,
            value_type TEXT,
            value ANY,
            -- Milliseconds since the Unix epoch; 0 = never.
            last_updated_ms INTEGER NOT NULL
        ) STRICT;
        CREATE INDEX characteristics_by_service ON characteristics (service_id, position);
        CREATE INDEX characteristics_by_accessory ON characteristics (accessory_id);

        CREATE TABLE service_groups (
            id INTEGER PRIMARY KEY,
            home_id INTEGER NOT NULL REFERENCES homes (id) DEFERRABLE INITIALLY DEFERRED,
            position INTEGER NOT NULL,
            name TEXT NOT NULL
        ) STRICT;
        CREATE INDEX service_groups_by_home ON service_groups (home_id, position);

        CREATE TABLE service_group_members (
            group_id INTEGER NOT NULL REFERENCES service_groups (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
            position INTEGER NOT NULL,
            service_id INTEGER NOT NULL REFERENCES services (id) DEFERRABLE INITIALLY DEFERRED,
            PRIMARY KEY (group_id, position)
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX service_group_members_by_service ON service_group_members (service_id);

        CREATE TABLE action_sets (
            id INTEGER PRIMARY KEY,
            home_id INTEGER NOT NULL REFERENCES homes (id) DEFERRABLE INITIALLY DEFERRED,
            position INTEGER NOT NULL,
            name TEXT NOT NULL,
            -- user-defined, wake-up, sleep, departure, arrival
            kind TEXT NOT NULL
        ) STRICT;
        CREATE INDEX action_sets_by_home ON action_sets (home_id, position);

        CREATE TABLE actions (
            action_set_id INTEGER NOT NULL REFERENCES action_sets (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
            position INTEGER NOT NULL,
            characteristic_id INTEGER NOT NULL REFERENCES characteristics (id) DEFERRABLE INITIALLY DEFERRED,
            value_type TEXT NOT NULL,
            value ANY,
            PRIMARY KEY (action_set_id, position)
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX actions_by_characteristic ON actions (characteristic_id);

        CREATE TABLE triggers (
            id INTEGER PRIMARY KEY,
            home_id INTEGER NOT NULL REFERENCES homes (id) DEFERRABLE INITIALLY DEFERRED,
            position INTEGER NOT NULL,
            name TEXT NOT NULL,
            is_enabled INTEGER NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('timer', 'event')),
            -- A timer: when it first fires, where, and how it repeats.
            fire_date_ms INTEGER,
            time_zone TEXT,
            recurrence TEXT,
            -- An event: the characteristic watched and the value or range it fires on.
            characteristic_id INTEGER REFERENCES characteristics (id) DEFERRABLE INITIALLY DEFERRED,
            value_type TEXT,
            value ANY,
            range_min REAL,
            range_max REAL
        ) STRICT;
        CREATE INDEX triggers_by_home ON triggers (home_id, position);
        CREATE INDEX triggers_by_characteristic ON triggers (characteristic_id);

        CREATE TABLE trigger_action_sets (
            trigger_id INTEGER NOT NULL REFERENCES triggers (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
            position INTEGER NOT NULL,
            action_set_id INTEGER NOT NULL REFERENCES action_sets (id) DEFERRABLE INITIALLY DEFERRED,
            PRIMARY KEY (trigger_id, position)
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX trigger_action_sets_by_action_set ON trigger_action_sets (action_set_id);

        CREATE TABLE trigger_conditions (
            trigger_id INTEGER NOT NULL REFERENCES triggers (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
            position INTEGER NOT NULL,
            characteristic_id INTEGER NOT NULL REFERENCES characteristics (id) DEFERRABLE INITIALLY DEFERRED,
            -- ==, !=, <, <=, >, >=
            comparison TEXT NOT NULL,
            value_type TEXT NOT NULL,
            value ANY,
            PRIMARY KEY (trigger_id, position)
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX trigger_conditions_by_characteristic ON trigger_conditions (characteristic_id);
        """
}
