ALTER TABLE "context" ADD COLUMN "thinking" text;--> statement-breakpoint
ALTER TABLE "context" ADD COLUMN "tool_call_id" text;--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "tool_call_id" text;