-- The legacy XML endpoint's results are XML documents (DESIGN 5.7): each delivery says what
-- it carries. Everything else is JSON.
ALTER TABLE outbox ADD COLUMN content_type TEXT NOT NULL DEFAULT 'application/json';
