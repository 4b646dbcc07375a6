-- A source's roots go with it (ON DELETE CASCADE); the three failures are for status lists and revoked signers.
ALTER TYPE "public"."credential_failure" ADD VALUE 'revoked' BEFORE 'declined';--> statement-breakpoint
ALTER TYPE "public"."credential_failure" ADD VALUE 'suspended' BEFORE 'declined';--> statement-breakpoint
ALTER TYPE "public"."credential_failure" ADD VALUE 'status_unavailable' BEFORE 'declined';--> statement-breakpoint
CREATE TABLE "trust_anchors" (
	"source_id" text NOT NULL,
	"fingerprint" text NOT NULL,
	"certificate" text NOT NULL,
	"formats" text[] NOT NULL,
	"doc_types" text[],
	"label" text NOT NULL,
	"not_after" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "trust_anchors_source_id_fingerprint_pk" PRIMARY KEY("source_id","fingerprint")
);
--> statement-breakpoint
CREATE TABLE "trust_sources" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"location" text NOT NULL,
	"publisher" text NOT NULL,
	"issued_at" timestamp (3) with time zone NOT NULL,
	"sequence" integer,
	"next_update" timestamp (3) with time zone,
	"imported_at" timestamp (3) with time zone NOT NULL,
	"refreshed_at" timestamp (3) with time zone NOT NULL,
	"last_error" text,
	"last_error_at" timestamp (3) with time zone,
	"next_refresh_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "trust_sources_location_unique" UNIQUE("location")
);
--> statement-breakpoint
ALTER TABLE "trust_anchors" ADD CONSTRAINT "trust_anchors_source_id_trust_sources_id_fk" FOREIGN KEY ("source_id") REFERENCES "public"."trust_sources"("id") ON DELETE cascade ON UPDATE no action;