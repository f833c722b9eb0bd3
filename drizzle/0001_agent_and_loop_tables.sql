CREATE TABLE "compression_archives" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "compression_archives_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"session_id" text NOT NULL,
	"reason" text NOT NULL,
	"summary" text NOT NULL,
	"messages" text NOT NULL,
	"tokens_before" integer NOT NULL,
	"tokens_after" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "compression_archives_reason_check" CHECK ("compression_archives"."reason" in ('preturn', 'midturn', 'postturn', 'manual'))
);
--> statement-breakpoint
CREATE TABLE "loop_iterations" (
	"run_id" text NOT NULL,
	"iteration" integer NOT NULL,
	"phase" text NOT NULL,
	"indicators" text NOT NULL,
	"evidence" text NOT NULL,
	"state_hash" text NOT NULL,
	"gate_decision" text,
	"gate_reason" text,
	"exit_signal" text,
	"status_block" text NOT NULL,
	"decision" text,
	"prompt_tokens" bigint DEFAULT 0 NOT NULL,
	"completion_tokens" bigint DEFAULT 0 NOT NULL,
	"duration_ms" bigint NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone NOT NULL,
	CONSTRAINT "loop_iterations_pkey" PRIMARY KEY("run_id","iteration")
);
--> statement-breakpoint
CREATE TABLE "loop_runs" (
	"id" text PRIMARY KEY NOT NULL,
	"session_id" text NOT NULL,
	"task_name" text NOT NULL,
	"task" text NOT NULL,
	"config" text NOT NULL,
	"cwd" text NOT NULL,
	"status" text DEFAULT 'running' NOT NULL,
	"reason" text,
	"iteration" integer DEFAULT 0 NOT NULL,
	"max_iterations" integer NOT NULL,
	"stagnation_count" integer DEFAULT 0 NOT NULL,
	"hash_history" text DEFAULT '[]' NOT NULL,
	"diversifications" integer DEFAULT 0 NOT NULL,
	"prompt_tokens" bigint DEFAULT 0 NOT NULL,
	"completion_tokens" bigint DEFAULT 0 NOT NULL,
	"max_tokens" bigint,
	"deadline_at" timestamp with time zone,
	"git_head_at_start" text,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	CONSTRAINT "loop_runs_status_check" CHECK ("loop_runs"."status" in ('running', 'completed', 'incomplete', 'aborted', 'budget_exhausted', 'interrupted', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "memories" (
	"id" text PRIMARY KEY NOT NULL,
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "memories_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"user_id" text NOT NULL,
	"fact" text NOT NULL,
	"fact_md5" text GENERATED ALWAYS AS (md5("memories"."fact")) STORED NOT NULL,
	"source" text NOT NULL,
	"session_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "memories_source_check" CHECK ("memories"."source" in ('tool', 'extraction'))
);
--> statement-breakpoint
CREATE TABLE "planning_logs" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "planning_logs_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"session_id" text NOT NULL,
	"data" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "compression_archives" ADD CONSTRAINT "compression_archives_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "loop_iterations" ADD CONSTRAINT "loop_iterations_run_id_loop_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."loop_runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "loop_runs" ADD CONSTRAINT "loop_runs_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memories" ADD CONSTRAINT "memories_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "planning_logs" ADD CONSTRAINT "planning_logs_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "compression_archives_session_idx" ON "compression_archives" USING btree ("session_id","id");--> statement-breakpoint
CREATE INDEX "loop_runs_started_at_idx" ON "loop_runs" USING btree ("started_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "loop_runs_session_idx" ON "loop_runs" USING btree ("session_id");--> statement-breakpoint
CREATE UNIQUE INDEX "memories_user_fact_idx" ON "memories" USING btree ("user_id","fact_md5");--> statement-breakpoint
CREATE INDEX "memories_user_seq_idx" ON "memories" USING btree ("user_id","seq");--> statement-breakpoint
CREATE INDEX "memories_session_idx" ON "memories" USING btree ("session_id");--> statement-breakpoint
CREATE INDEX "planning_logs_session_idx" ON "planning_logs" USING btree ("session_id","id");