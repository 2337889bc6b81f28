"""Invariants that span tables, as triggers: a CHECK constraint cannot read another table.

- a clip ends no later than its video's probed duration;
- a chain pair joins the chains of clips i and i+1 of its own video;
- a relation goes from a pair of the earlier chain to a pair of the later chain.
Both PostgreSQL (the product) and SQLite (the single-machine default) get the same rules.
"""

from django.db import migrations

POSTGRES = [
    """
    CREATE OR REPLACE FUNCTION vidqa_clip_within_video() RETURNS trigger AS $$
    DECLARE dur double precision;
    BEGIN
        SELECT duration_s INTO dur FROM videos_video WHERE id = NEW.video_id;
        IF dur IS NOT NULL AND NEW.end_s > dur + 1e-6 THEN
            RAISE EXCEPTION 'clip ends at % s, after the end of its video (% s)', NEW.end_s, dur
                USING ERRCODE = 'check_violation';
        END IF;
        RETURN NEW;
    END $$ LANGUAGE plpgsql;
    CREATE TRIGGER clip_within_video BEFORE INSERT OR UPDATE ON videos_clip
        FOR EACH ROW EXECUTE FUNCTION vidqa_clip_within_video();
    """,
    """
    CREATE OR REPLACE FUNCTION vidqa_video_covers_clips() RETURNS trigger AS $$
    BEGIN
        IF NEW.duration_s IS NOT NULL AND EXISTS (
            SELECT 1 FROM videos_clip WHERE video_id = NEW.id AND end_s > NEW.duration_s + 1e-6) THEN
            RAISE EXCEPTION 'video duration % s is shorter than one of its clips', NEW.duration_s
                USING ERRCODE = 'check_violation';
        END IF;
        RETURN NEW;
    END $$ LANGUAGE plpgsql;
    CREATE TRIGGER video_covers_clips BEFORE UPDATE OF duration_s ON videos_video
        FOR EACH ROW EXECUTE FUNCTION vidqa_video_covers_clips();
    """,
    """
    CREATE OR REPLACE FUNCTION vidqa_chainpair_adjacent() RETURNS trigger AS $$
    BEGIN
        IF NOT EXISTS (
            SELECT 1 FROM annotator_qachain c JOIN videos_clip k ON k.id = c.clip_id
            WHERE c.id = NEW.chain_before_id AND k.video_id = NEW.video_id AND k.index = NEW.before_index)
        OR NOT EXISTS (
            SELECT 1 FROM annotator_qachain c JOIN videos_clip k ON k.id = c.clip_id
            WHERE c.id = NEW.chain_after_id AND k.video_id = NEW.video_id AND k.index = NEW.before_index + 1) THEN
            RAISE EXCEPTION 'a chain pair must join the chains of clips % and % of its video',
                NEW.before_index, NEW.before_index + 1 USING ERRCODE = 'check_violation';
        END IF;
        RETURN NEW;
    END $$ LANGUAGE plpgsql;
    CREATE TRIGGER chainpair_adjacent BEFORE INSERT OR UPDATE ON annotator_chainpair
        FOR EACH ROW EXECUTE FUNCTION vidqa_chainpair_adjacent();
    """,
    """
    CREATE OR REPLACE FUNCTION vidqa_relation_ends() RETURNS trigger AS $$
    BEGIN
        IF NOT EXISTS (
            SELECT 1 FROM annotator_chainpair p
            JOIN annotator_qapair a ON a.id = NEW.from_pair_id AND a.chain_id = p.chain_before_id
            JOIN annotator_qapair b ON b.id = NEW.to_pair_id AND b.chain_id = p.chain_after_id
            WHERE p.id = NEW.chain_pair_id) THEN
            RAISE EXCEPTION 'a relation must go from a pair of the earlier chain to a pair of the later chain'
                USING ERRCODE = 'check_violation';
        END IF;
        RETURN NEW;
    END $$ LANGUAGE plpgsql;
    CREATE TRIGGER relation_ends BEFORE INSERT OR UPDATE ON annotator_relation
        FOR EACH ROW EXECUTE FUNCTION vidqa_relation_ends();
    """,
]

_CHAINPAIR_BAD = """
    NOT EXISTS (SELECT 1 FROM annotator_qachain c JOIN videos_clip k ON k.id = c.clip_id
                WHERE c.id = NEW.chain_before_id AND k.video_id = NEW.video_id AND k."index" = NEW.before_index)
    OR NOT EXISTS (SELECT 1 FROM annotator_qachain c JOIN videos_clip k ON k.id = c.clip_id
                WHERE c.id = NEW.chain_after_id AND k.video_id = NEW.video_id AND k."index" = NEW.before_index + 1)
"""
_RELATION_BAD = """
    NOT EXISTS (SELECT 1 FROM annotator_chainpair p
                JOIN annotator_qapair a ON a.id = NEW.from_pair_id AND a.chain_id = p.chain_before_id
                JOIN annotator_qapair b ON b.id = NEW.to_pair_id AND b.chain_id = p.chain_after_id
                WHERE p.id = NEW.chain_pair_id)
"""
_CLIP_BAD = """
    NEW.end_s > (SELECT COALESCE(duration_s, 1e300) FROM videos_video WHERE id = NEW.video_id) + 1e-6
"""
SQLITE = []
for event in ("INSERT", "UPDATE"):
    low = event.lower()
    SQLITE += [
        f"""CREATE TRIGGER clip_within_video_{low} BEFORE {event} ON videos_clip WHEN {_CLIP_BAD}
            BEGIN SELECT RAISE(ABORT, 'clip ends after the end of its video'); END;""",
        f"""CREATE TRIGGER chainpair_adjacent_{low} BEFORE {event} ON annotator_chainpair WHEN {_CHAINPAIR_BAD}
            BEGIN SELECT RAISE(ABORT, 'a chain pair must join the chains of clips i and i+1 of its video'); END;""",
        f"""CREATE TRIGGER relation_ends_{low} BEFORE {event} ON annotator_relation WHEN {_RELATION_BAD}
            BEGIN SELECT RAISE(ABORT, 'a relation must go from a pair of the earlier chain to a pair of the later chain'); END;""",
    ]
SQLITE.append(
    """CREATE TRIGGER video_covers_clips BEFORE UPDATE OF duration_s ON videos_video
       WHEN NEW.duration_s IS NOT NULL AND EXISTS (
            SELECT 1 FROM videos_clip WHERE video_id = NEW.id AND end_s > NEW.duration_s + 1e-6)
       BEGIN SELECT RAISE(ABORT, 'video duration is shorter than one of its clips'); END;"""
)

DROP_POSTGRES = """
DROP TRIGGER IF EXISTS clip_within_video ON videos_clip;
DROP TRIGGER IF EXISTS video_covers_clips ON videos_video;
DROP TRIGGER IF EXISTS chainpair_adjacent ON annotator_chainpair;
DROP TRIGGER IF EXISTS relation_ends ON annotator_relation;
DROP FUNCTION IF EXISTS vidqa_clip_within_video, vidqa_video_covers_clips, vidqa_chainpair_adjacent, vidqa_relation_ends;
"""
SQLITE_NAMES = [
    "clip_within_video_insert", "clip_within_video_update", "chainpair_adjacent_insert", "chainpair_adjacent_update",
    "relation_ends_insert", "relation_ends_update", "video_covers_clips",
]


def create(apps, schema_editor):
    statements = POSTGRES if schema_editor.connection.vendor == "postgresql" else SQLITE
    for sql in statements:
        schema_editor.execute(sql, params=None)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP_POSTGRES, params=None)
    else:
        for name in SQLITE_NAMES:
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [("annotator", "0001_initial"), ("videos", "0001_initial")]
    operations = [migrations.RunPython(create, drop)]
