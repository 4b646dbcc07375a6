-- A client's approved verifications over a range of UTC days (its month, for the plan limit), read with a
-- snapshot of its own: in READ COMMITTED each statement of a VOLATILE function takes a new one. A completion
-- is one statement (src/oauth/approval.ts) that locks a limited client's row and then calls this: a plain
-- subquery would read the counters as they stood when the statement began, before it waited for the lock,
-- and two completions racing for a plan's last verification would both pass (test/oauth/approval-race.test.ts).
CREATE FUNCTION "ofage_counted_verifications"("client" text, "first_day" date, "end_day" date) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  counted integer;
BEGIN
  SELECT coalesce(sum("total"), 0)::integer INTO counted FROM "usage_daily"
    WHERE "client_id" = "client" AND "day" >= "first_day" AND "day" < "end_day";
  RETURN counted;
END
$$;
