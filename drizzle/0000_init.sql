CREATE TABLE "audit_logs" (
	"transaction_id" uuid PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"subject" text NOT NULL,
	"method_class" text NOT NULL,
	"verification_level" text NOT NULL,
	"age_over" integer NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"revoked_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "auth_codes" (
	"code_hash" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"transaction_id" uuid NOT NULL,
	"redirect_uri" text NOT NULL,
	"state" text,
	"created_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"used_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "clients" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"secret_hash" text NOT NULL,
	"redirect_uris" text[] NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"min_age" integer,
	"verification_limit" integer,
	"sandbox" boolean DEFAULT false NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "clients_min_age_range" CHECK ("clients"."min_age" is null or "clients"."min_age" between 1 and 99),
	CONSTRAINT "clients_limit_non_negative" CHECK ("clients"."verification_limit" is null or "clients"."verification_limit" >= 0)
);
--> statement-breakpoint
CREATE TABLE "server_secrets" (
	"name" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "usage_daily" (
	"client_id" text NOT NULL,
	"day" date NOT NULL,
	"total" integer DEFAULT 0 NOT NULL,
	"age_only" integer DEFAULT 0 NOT NULL,
	"biometric" integer DEFAULT 0 NOT NULL,
	"reverification" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "usage_daily_client_id_day_pk" PRIMARY KEY("client_id","day")
);
--> statement-breakpoint
ALTER TABLE "audit_logs" ADD CONSTRAINT "audit_logs_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "auth_codes" ADD CONSTRAINT "auth_codes_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "auth_codes" ADD CONSTRAINT "auth_codes_transaction_id_audit_logs_transaction_id_fk" FOREIGN KEY ("transaction_id") REFERENCES "public"."audit_logs"("transaction_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_daily" ADD CONSTRAINT "usage_daily_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_logs_client_created" ON "audit_logs" USING btree ("client_id","created_at");--> statement-breakpoint
CREATE INDEX "auth_codes_expires" ON "auth_codes" USING btree ("expires_at");