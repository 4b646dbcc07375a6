-- A client's day of usage may be counted over several rows, one per shard (src/usage/counters.ts): every
-- completion of a busy client updated the one row, and each waited for the last one's commit to take it.
-- Existing rows become shard 0; every reader sums. (drizzle-kit wrote the primary key before the column.)
ALTER TABLE "usage_daily" ADD COLUMN "shard" smallint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "usage_daily" DROP CONSTRAINT "usage_daily_client_id_day_pk";--> statement-breakpoint
ALTER TABLE "usage_daily" ADD CONSTRAINT "usage_daily_client_id_day_shard_pk" PRIMARY KEY("client_id","day","shard");
