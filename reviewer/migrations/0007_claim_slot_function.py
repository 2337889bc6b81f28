"""The database function claim-next calls, on PostgreSQL, once it holds an item's row lock.

claim-next runs as one statement there (reviewer.queues._claim_statement): it picks and locks the
next candidate and inserts the lease. The candidate's slot count was read with the statement's
snapshot, which may predate another claimer's commit; this function is VOLATILE, so each query in
it takes a fresh snapshot (READ COMMITTED) and counts again under the lock, as a second statement
would. It also marks the item's lapsed leases at the stage expired, giving their slots up.
SQLite has no such function and needs none: its claims run one after another.
"""

from django.db import migrations

FUNCTION = """
CREATE OR REPLACE FUNCTION reviewer_claim_slot_free(
    p_kind text, p_item bigint, p_stage text, p_round timestamptz, p_overlap integer, p_user integer,
    p_now timestamptz
) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    taken integer;
    mine boolean;
BEGIN
    UPDATE reviewer_assignment SET status = 'expired'
     WHERE ((p_kind = 'mcq' AND mcq_id = p_item) OR (p_kind = 'qa_chain' AND qa_chain_id = p_item)
            OR (p_kind = 'chain_pair' AND chain_pair_id = p_item))
       AND stage = p_stage AND status = 'active' AND lease_expires_at <= p_now;
    SELECT count(*) FILTER (WHERE status <> 'released'), coalesce(bool_or(assignee_id = p_user), false)
      INTO taken, mine
      FROM reviewer_assignment
     WHERE ((p_kind = 'mcq' AND mcq_id = p_item) OR (p_kind = 'qa_chain' AND qa_chain_id = p_item)
            OR (p_kind = 'chain_pair' AND chain_pair_id = p_item))
       AND stage = p_stage AND status IN ('active', 'completed', 'released') AND leased_at >= p_round;
    RETURN taken < p_overlap AND NOT mine;
END
$$;
"""


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(FUNCTION)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        args = "text, bigint, text, timestamptz, integer, integer, timestamptz"
        schema_editor.execute(f"DROP FUNCTION IF EXISTS reviewer_claim_slot_free({args})")


class Migration(migrations.Migration):
    dependencies = [("reviewer", "0006_queue_session_lease")]

    operations = [migrations.RunPython(create, drop, elidable=False)]
