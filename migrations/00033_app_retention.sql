-- +goose Up
-- The retention sweep prunes app sessions and sign-in links long past their end, oldest
-- first, through these.
CREATE INDEX app_sessions_expires ON app_sessions (expires_at);
CREATE INDEX app_signin_links_expires ON app_signin_links (expires_at);

-- +goose Down
DROP INDEX app_signin_links_expires;
DROP INDEX app_sessions_expires;
