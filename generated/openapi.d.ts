// Generated from openapi.yaml by `npm run generate` (scripts/generate-types.mjs). Do not edit.

export interface paths {
    "/books": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List books
         * @description Books one page at a time, in creation order unless `sort` says otherwise. Filters combine
         *     with AND; a repeated `author` means any of them. `q` searches titles and authors,
         *     ignoring case and accents; its results come most relevant first unless `sort` is given.
         *     For incremental sync, keep `updated_since` and `sort=updated_at` and follow the cursor.
         *     Every request does bounded work however large the catalogue: a combination that could not
         *     be answered so is refused with a 400 naming the parameter to drop.
         *
         *     Deprecated since 2026-12-02, until 2027-06-02: `Accept: text/csv` or `application/x-ndjson`
         *     still answers an export of what the list selects (as `GET /books/export.csv` does), with `Deprecation`,
         *     `Sunset` and `Link` headers; `bom=true` applies to it only. Use `GET /books/export.csv`.
         */
        get: operations["listBooks"];
        put?: never;
        /**
         * Create a book
         * @description With an `Idempotency-Key`, a retry of the same request answers the stored first response and creates nothing.
         */
        post: operations["createBook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/books/{book_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The book's id, as returned when it was created.
                 * @example 0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60
                 */
                book_id: components["parameters"]["BookId"];
            };
            cookie?: never;
        };
        /**
         * Get a book
         * @description The book with its strong `ETag`; send that tag in `If-None-Match` to get a 304 while it is unchanged, or in `If-Match` on a `PUT` or `DELETE`. Public unless the server sets `PUBLIC_BOOK_READS=false`.
         */
        get: operations["getBook"];
        /**
         * Replace a book
         * @description Replaces every writable field; an omitted optional field is cleared. Never creates. With `If-Match`, replaces only if the book is still as the caller saw it.
         */
        put: operations["updateBook"];
        post?: never;
        /**
         * Delete a book
         * @description Deletes the book for good; its id is never reused. With `If-Match`, deletes only if the book is still as the caller saw it.
         */
        delete: operations["deleteBook"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/books/export.csv": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Export books as CSV
         * @description Every book the filters, `q` and `sort` select, as one CSV file streamed from one snapshot,
         *     in the list's order (the `exports` tag has the rules every export follows).
         */
        get: operations["exportBooksCsv"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/books/export.ndjson": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Export books as NDJSON
         * @description Every book the filters, `q` and `sort` select, as one NDJSON file streamed from one snapshot,
         *     in the list's order (the `exports` tag has the rules every export follows).
         */
        get: operations["exportBooksNdjson"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/students": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List students
         * @description Students one page at a time, in creation order unless `sort` says otherwise. Filters
         *     combine with AND; a repeated `status` means any of them. `q` searches names only (never
         *     emails), ignoring case and accents; its results come most relevant first unless `sort` is
         *     given. For incremental sync, keep `updated_since` and `sort=updated_at` and follow the cursor.
         *
         *     Deprecated since 2026-12-02, until 2027-06-02: `Accept: text/csv` or `application/x-ndjson`
         *     still answers an export of what the list selects (as `GET /api/students/export.csv` does), with `Deprecation`,
         *     `Sunset` and `Link` headers; `bom=true` applies to it only. Use `GET /api/students/export.csv`.
         */
        get: operations["listStudents"];
        put?: never;
        /**
         * Create a student
         * @description With an `Idempotency-Key`, a retry of the same request answers the stored first response and creates nothing.
         */
        post: operations["createStudent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/students/{student_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The student's id, as returned when they were created.
                 * @example 0190a5d2-8f00-7c2d-8a11-5e6f7a8b9c0d
                 */
                student_id: components["parameters"]["StudentId"];
            };
            cookie?: never;
        };
        /**
         * Get a student
         * @description The student with their strong `ETag`; send that tag in `If-None-Match` to get a 304 while it is unchanged, or in `If-Match` on a `PUT`.
         */
        get: operations["getStudent"];
        /**
         * Replace a student
         * @description Replaces every writable field; an omitted optional field is cleared and an omitted `status` becomes `active`. Never creates. With `If-Match`, replaces only if the student is still as the caller saw it.
         */
        put: operations["updateStudent"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/students/export.csv": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Export students as CSV
         * @description Every student the filters, `q` and `sort` select, as one CSV file streamed from one snapshot,
         *     in the list's order (the `exports` tag has the rules every export follows).
         */
        get: operations["exportStudentsCsv"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/students/export.ndjson": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Export students as NDJSON
         * @description Every student the filters, `q` and `sort` select, as one NDJSON file streamed from one snapshot,
         *     in the list's order (the `exports` tag has the rules every export follows).
         */
        get: operations["exportStudentsNdjson"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List events
         * @description Events after `after` (from the oldest kept when it is absent), oldest first, in the one order
         *     of this deployment. A key sees the events of what it may read: `book.*` with `books:read`,
         *     `student.*` with `students:read`. `next_cursor` is never null: pass it as `after` to continue;
         *     it moves past events the key cannot see or `types` leaves out, so a poll never rescans them.
         *     An empty page means nothing newer yet: poll again later, or use `/events/stream`.
         */
        get: operations["listEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/events/stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Follow events live (Server-Sent Events)
         * @description A `text/event-stream` that first replays the events after `Last-Event-ID` (or `after`; from
         *     now when both are absent), then sends each new event as it is committed. The first frame is
         *     `retry: <ms>`; every event frame carries `id:` (its event id), `event:` (its type) and one
         *     `data:` line (the event as JSON, exactly as `/events` gives it); a comment line `:` is sent
         *     every heartbeat (15 s by default). A frame with only an `id:` moves the position past events
         *     this stream leaves out, so that a reconnection does not scan them again. The stream ends after
         *     `EVENT_STREAM_MAX_AGE_MS` (1 hour), when the server shuts down, when the key is revoked or
         *     loses its read scope, or when the client stops reading for `EVENT_STREAM_STALL_MS`; reconnect
         *     with the last id received (browsers' EventSource does it by itself, but cannot send an
         *     `Authorization` header: use a fetch-based client). A 410 means re-list, then stream from the
         *     list's `Events-Cursor`.
         */
        get: operations["streamEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/imports": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List imports
         * @description The imports this key started (an admin key sees every one), newest first, at most `limit`, each as getting it answers.
         */
        get: operations["listImports"];
        put?: never;
        /**
         * Import books or students from CSV or NDJSON
         * @description Streams a file of records into `collection` (the key needs that collection's write scope).
         *     The body is read as it arrives, in constant memory: each row is validated exactly as a single
         *     create is (the same schema, the same words), staged, and checked for values that must be
         *     unique (an ISBN, an email) against the rest of the file and the stored records. Then the
         *     answer is `202` with the import's `Location`, and the rows are written in batches, each with
         *     its events (one `book.created` or `student.created` per record, so that `/events` and
         *     webhooks see every record; webhooks deliver them on a lane of their own, so that they do not
         *     hold up other changes' deliveries), yielding to other requests between batches.
         *
         *     - `mode=all` (the default): one refused row and nothing is written; the import ends
         *       `failed` with a report of every refused row (up to 1,000). Only a unique value that another
         *       request stores while the rows are being written (after every row was checked) is refused
         *       then, and reported, while the other rows are written.
         *     - `mode=valid`: the valid rows are written, the refused ones reported.
         *     - A row that repeats an earlier row's id or unique value is refused (`already-exists`).
         *
         *     CSV (`text/csv`): RFC 4180, UTF-8 with or without a byte order mark, a header row naming
         *     fields of the collection's import row (the columns an export writes, in any order); an empty
         *     cell is an absent field. NDJSON (`application/x-ndjson`): one JSON object per line. Rows may
         *     carry the id and times of a record exported from this or another deployment, kept as they
         *     are, so that an export imports back unchanged. Limits: `IMPORT_MAX_BYTES` (1 GiB) and
         *     `IMPORT_MAX_ROWS` (2,000,000) per file; beyond either, a 413 naming it and nothing written.
         *     The upload is one request: it must arrive and be checked within the server's
         *     `REQUEST_TIMEOUT` (30 s by default), else a 408 and nothing written; an operator raises it
         *     for files of millions of rows (about 40,000 rows a second are received on a small server).
         *     An `Idempotency-Key` makes a retried upload (the same file, `collection`, `mode` and media
         *     type) answer the first one's import instead of starting a second (while the first is still
         *     being received, a 409); the key sent with another file, collection, mode or media type is a
         *     422 (nothing imported); an upload that never
         *     arrived whole (cut, refused, over a limit) frees its key, so that its retry starts afresh. The rate limit counts an import as one request and one more per 1,000
         *     rows read, or per 1,000 pieces its body arrives in (HTTP chunks) when there are more pieces than
         *     rows (a file sent in chunks of a few bytes costs the server what its pieces do); a file that
         *     spends the quota stops there (429, nothing written). A file refused with a problem (400,
         *     413, 429) leaves no import behind: its caller never got an id, and `GET /imports` does not
         *     list it. An upload cut before its end (the client went away, a 408) is listed, `failed`.
         */
        post: operations["createImport"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/imports/{import_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The import's id, as its `Location` gave it.
                 * @example 0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b61
                 */
                import_id: components["parameters"]["ImportId"];
            };
            cookie?: never;
        };
        /**
         * Get an import, or follow it live
         * @description The import's state, counts, rate and report, if this key started it (an admin key gets any;
         *     another key's is 404). With `Accept: text/event-stream`, its progress live: an `import`
         *     frame with the import as JSON at once and every second (whichever node writes it), the
         *     last one when it ends (`succeeded`, `failed` or `cancelled`), then the stream closes.
         */
        get: operations["getImport"];
        put?: never;
        post?: never;
        /**
         * Cancel an import
         * @description Stops the import: while its file is being received, nothing is written; in `mode=valid`, after the batch being written, and the records already written stay. An import in `mode=all` whose rows all passed and are being written runs to its end (cancelling it then would leave the file half written): a 409, as for an import that has ended. Answers the import as it is then; it is `cancelled` once its runner stops, within a batch.
         */
        delete: operations["cancelImport"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhook-endpoints": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List webhook endpoints
         * @description The endpoints this key registered (an admin key sees every endpoint of the deployment, at most `WEBHOOK_ENDPOINTS_MAX`), oldest first, with their state. Secrets are never shown again.
         */
        get: operations["listWebhookEndpoints"];
        put?: never;
        /**
         * Register a webhook endpoint
         * @description From now on, each event of the chosen `types` is POSTed to `url`, signed with the secret in the
         *     answer (shown this once: store it). A delivery succeeds on any 2xx within 15 s; anything else
         *     is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and then every 10 h (with jitter), across
         *     restarts. A 410 answer disables the endpoint at once; one that keeps failing for
         *     `WEBHOOK_DISABLE_AFTER_HOURS` (120) is disabled too. Deliveries can arrive out of order and
         *     more than once: use `webhook-id` to drop repeats and `data.revision` to drop stale ones. The
         *     deliveries keep the rights of the key that registered the endpoint, which owns it: events it
         *     cannot read now are not sent, and the endpoint is disabled (`key_revoked`) once the key is revoked.
         *     The events an import writes are queued on a lane of their own, which takes turns with the
         *     endpoint's other events and with other endpoints: an import of a million records does not hold
         *     up the delivery of any other change. Up to 1,000 deliveries per lane wait in the service's
         *     queue; while a receiver is down, the rest wait in the change feed.
         */
        post: operations["createWebhookEndpoint"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhook-endpoints/{endpoint_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The endpoint's id, as returned when it was registered.
                 * @example 0190a5d2-9a00-7d3e-8b22-6f7a8b9c0d1e
                 */
                endpoint_id: components["parameters"]["WebhookEndpointId"];
            };
            cookie?: never;
        };
        /**
         * Get a webhook endpoint
         * @description The endpoint and its delivery state (`status`, why it was disabled, since when deliveries fail), if this key registered it (an admin key gets any; another key's is 404, as if it did not exist); never its signing secret, which only its creation and a rotation show.
         */
        get: operations["getWebhookEndpoint"];
        put?: never;
        post?: never;
        /**
         * Delete a webhook endpoint
         * @description No delivery to it starts after this answer, including its pending retries. Only the key that registered it or an admin key can delete it; for another key it is 404, as if it did not exist.
         */
        delete: operations["deleteWebhookEndpoint"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhook-endpoints/{endpoint_id}/secret": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The endpoint's id, as returned when it was registered.
                 * @example 0190a5d2-9a00-7d3e-8b22-6f7a8b9c0d1e
                 */
                endpoint_id: components["parameters"]["WebhookEndpointId"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Rotate a webhook endpoint's secret
         * @description A new secret (shown this once). Until `previous_secret_expires_at` (24 hours) each delivery carries two signatures, one per secret, so the receiver can switch at any moment in between. Only the key that registered the endpoint or an admin key can rotate its secret; for another key it is 404, as if it did not exist.
         */
        post: operations["rotateWebhookSecret"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhook-endpoints/{endpoint_id}/enable": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The endpoint's id, as returned when it was registered.
                 * @example 0190a5d2-9a00-7d3e-8b22-6f7a8b9c0d1e
                 */
                endpoint_id: components["parameters"]["WebhookEndpointId"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Enable a disabled webhook endpoint
         * @description Deliveries resume with the events that follow; what happened while it was disabled is not sent (read it from `/events`). Enabling an enabled endpoint changes nothing. Only the key that registered it or an admin key can enable it (for another key it is 404, as if it did not exist); an endpoint whose key was revoked is disabled again by the next delivery run.
         */
        post: operations["enableWebhookEndpoint"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface webhooks {
    "book.created": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * book.created
         * @description Sent to each enabled endpoint registered for `book.created`; signed per Standard Webhooks. Answer 2xx within 15 s to acknowledge; 410 disables the endpoint; anything else is retried.
         */
        post: operations["onBookCreated"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "book.replaced": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * book.replaced
         * @description Sent to each enabled endpoint registered for `book.replaced`; signed per Standard Webhooks. Answer 2xx within 15 s to acknowledge; 410 disables the endpoint; anything else is retried.
         */
        post: operations["onBookReplaced"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "book.deleted": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * book.deleted
         * @description Sent to each enabled endpoint registered for `book.deleted`; signed per Standard Webhooks. Answer 2xx within 15 s to acknowledge; 410 disables the endpoint; anything else is retried.
         */
        post: operations["onBookDeleted"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "student.created": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * student.created
         * @description Sent to each enabled endpoint registered for `student.created`; signed per Standard Webhooks. Answer 2xx within 15 s to acknowledge; 410 disables the endpoint; anything else is retried.
         */
        post: operations["onStudentCreated"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "student.replaced": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * student.replaced
         * @description Sent to each enabled endpoint registered for `student.replaced`; signed per Standard Webhooks. Answer 2xx within 15 s to acknowledge; 410 disables the endpoint; anything else is retried.
         */
        post: operations["onStudentReplaced"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface components {
    schemas: {
        /**
         * Format: uuid
         * @description Server-assigned UUIDv7.
         * @example 0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60
         */
        Id: string;
        /**
         * Format: date-time
         * @description RFC 3339 UTC timestamp, set by the server.
         * @example 2026-11-21T09:30:00.000Z
         */
        Timestamp: string;
        /**
         * @description The writable fields of a book.
         * @example {
         *       "title": "Dune",
         *       "author": "Frank Herbert",
         *       "isbn": "978-0-441-01359-3",
         *       "published_year": 1965
         *     }
         */
        BookInput: {
            /**
             * @description Any Unicode text but the NUL character (U+0000), which not every storage engine can hold.
             * @example Dune
             */
            title: string;
            /**
             * @description Any Unicode text but the NUL character (U+0000), which not every storage engine can hold.
             * @example Frank Herbert
             */
            author: string;
            /**
             * Format: isbn
             * @description ISBN-10 or ISBN-13 (starting 978 or 979), hyphens and spaces allowed between digits. `format: isbn` means the check digit must be right: the last digit of an ISBN-13 makes the sum of its digits weighted 1, 3, 1, 3, … a multiple of 10; the last character of an ISBN-10 (X for 10) makes the sum of its digits weighted 10, 9, …, 1 a multiple of 11. Stored and returned as the 13-digit form. Unique among books.
             * @example 978-0-441-01359-3
             */
            isbn?: string | null;
            /**
             * @description Year of publication, negative for years BCE. Announced books may carry a future year.
             * @example 1965
             */
            published_year?: number | null;
        };
        /**
         * @description What replaces a book: its writable fields, as in `BookInput`. The server-set fields of a `Book` (`book_id`, `created_at`, `updated_at`) may be sent back as a GET returned them, so that a client can change a field of what it read and PUT it back; they are not `readOnly` here, as they are part of the request such a client sends. The timestamps are ignored whatever they hold, never stored and never compared: the book keeps its own `created_at`, and the server sets `updated_at`. The id, if sent, must be the one in the path, else 400. What guards against a lost update (a body read before someone else's change) is `If-Match`: it is evaluated before the body, and a stale tag is a 412 whatever the body holds. Omitted, the server-set fields change nothing.
         * @example {
         *       "book_id": "0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60",
         *       "title": "Dune",
         *       "author": "Frank Herbert",
         *       "isbn": "9780441013593",
         *       "published_year": 1966,
         *       "created_at": "2026-11-21T09:30:00.000Z",
         *       "updated_at": "2026-11-21T09:30:00.000Z"
         *     }
         */
        BookReplacement: {
            /** @description Optional; if sent, the id in the path. */
            book_id?: components["schemas"]["Id"];
            title: components["schemas"]["BookInput"]["title"];
            author: components["schemas"]["BookInput"]["author"];
            isbn?: components["schemas"]["BookInput"]["isbn"];
            published_year?: components["schemas"]["BookInput"]["published_year"];
            /** @description Optional; ignored whatever it holds, never stored: the record keeps its own. `If-Match`, not this field, guards against a lost update. */
            created_at?: components["schemas"]["Timestamp"];
            /** @description Optional; ignored whatever it holds, never stored: the server sets it on every write. `If-Match`, not this field, guards against a lost update. */
            updated_at?: components["schemas"]["Timestamp"];
        };
        /**
         * @example {
         *       "book_id": "0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60",
         *       "title": "Dune",
         *       "author": "Frank Herbert",
         *       "isbn": "9780441013593",
         *       "published_year": 1965,
         *       "created_at": "2026-11-21T09:30:00.000Z",
         *       "updated_at": "2026-11-21T09:30:00.000Z"
         *     }
         */
        Book: {
            book_id: components["schemas"]["Id"];
            title: string;
            author: string;
            /** @description ISBN-13, digits only; `null` when unknown. */
            isbn: string | null;
            published_year: number | null;
            created_at: components["schemas"]["Timestamp"];
            updated_at: components["schemas"]["Timestamp"];
        };
        /**
         * @example {
         *       "items": [
         *         {
         *           "book_id": "0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60",
         *           "title": "Dune",
         *           "author": "Frank Herbert",
         *           "isbn": "9780441013593",
         *           "published_year": 1965,
         *           "created_at": "2026-11-21T09:30:00.000Z",
         *           "updated_at": "2026-11-21T09:30:00.000Z"
         *         }
         *       ],
         *       "next_cursor": null
         *     }
         */
        BookPage: {
            items: components["schemas"]["Book"][];
            next_cursor: components["schemas"]["NextCursor"];
        };
        /**
         * @description The writable fields of a student.
         * @example {
         *       "name": "Ada Lovelace",
         *       "email": "ada@example.org",
         *       "enrollment_year": 2025,
         *       "status": "active"
         *     }
         */
        StudentInput: {
            /**
             * @description Any Unicode text but the NUL character (U+0000), which not every storage engine can hold.
             * @example Ada Lovelace
             */
            name: string;
            /**
             * Format: email
             * @description Unique among students, regardless of letter case.
             * @example ada@example.org
             */
            email: string;
            /**
             * @description Year the student enrolled (a future year for an admitted student).
             * @example 2025
             */
            enrollment_year?: number | null;
            status?: components["schemas"]["StudentStatus"];
        };
        /**
         * @description What replaces a student: their writable fields, as in `StudentInput`. The server-set fields of a `Student` (`student_id`, `created_at`, `updated_at`) may be sent back as a GET returned them, so that a client can change a field of what it read and PUT it back; they are not `readOnly` here, as they are part of the request such a client sends. The timestamps are ignored whatever they hold, never stored and never compared: the student keeps their own `created_at`, and the server sets `updated_at`. The id, if sent, must be the one in the path, else 400. What guards against a lost update (a body read before someone else's change) is `If-Match`: it is evaluated before the body, and a stale tag is a 412 whatever the body holds. Omitted, the server-set fields change nothing.
         * @example {
         *       "student_id": "0190a5d2-8f00-7c2d-8a11-5e6f7a8b9c0d",
         *       "name": "Ada Lovelace",
         *       "email": "ada@example.org",
         *       "enrollment_year": 2025,
         *       "status": "graduated",
         *       "created_at": "2026-11-21T09:30:00.000Z",
         *       "updated_at": "2026-11-21T09:30:00.000Z"
         *     }
         */
        StudentReplacement: {
            /** @description Optional; if sent, the id in the path. */
            student_id?: components["schemas"]["Id"];
            name: components["schemas"]["StudentInput"]["name"];
            email: components["schemas"]["StudentInput"]["email"];
            enrollment_year?: components["schemas"]["StudentInput"]["enrollment_year"];
            status?: components["schemas"]["StudentStatus"];
            /** @description Optional; ignored whatever it holds, never stored: the record keeps its own. `If-Match`, not this field, guards against a lost update. */
            created_at?: components["schemas"]["Timestamp"];
            /** @description Optional; ignored whatever it holds, never stored: the server sets it on every write. `If-Match`, not this field, guards against a lost update. */
            updated_at?: components["schemas"]["Timestamp"];
        };
        /**
         * @description `active` by default; `graduated` or `withdrawn` retire a record, since students are never deleted.
         * @default active
         * @example active
         * @enum {string}
         */
        StudentStatus: "active" | "graduated" | "withdrawn";
        /**
         * @example {
         *       "student_id": "0190a5d2-8f00-7c2d-8a11-5e6f7a8b9c0d",
         *       "name": "Ada Lovelace",
         *       "email": "ada@example.org",
         *       "enrollment_year": 2025,
         *       "status": "active",
         *       "created_at": "2026-11-21T09:30:00.000Z",
         *       "updated_at": "2026-11-21T09:30:00.000Z"
         *     }
         */
        Student: {
            student_id: components["schemas"]["Id"];
            name: string;
            /** Format: email */
            email: string;
            enrollment_year: number | null;
            status: components["schemas"]["StudentStatus"];
            created_at: components["schemas"]["Timestamp"];
            updated_at: components["schemas"]["Timestamp"];
        };
        /**
         * @example {
         *       "items": [
         *         {
         *           "student_id": "0190a5d2-8f00-7c2d-8a11-5e6f7a8b9c0d",
         *           "name": "Ada Lovelace",
         *           "email": "ada@example.org",
         *           "enrollment_year": 2025,
         *           "status": "active",
         *           "created_at": "2026-11-21T09:30:00.000Z",
         *           "updated_at": "2026-11-21T09:30:00.000Z"
         *         }
         *       ],
         *       "next_cursor": null
         *     }
         */
        StudentPage: {
            items: components["schemas"]["Student"][];
            next_cursor: components["schemas"]["NextCursor"];
        };
        /**
         * @description Pass as `cursor` to get the next page; `null` on the last page.
         * @example MTI.q0x2Zb5yPj6nTW-FXx1l8g
         */
        NextCursor: string | null;
        /**
         * @description An opaque position in the change feed (an event id is one); compare only for equality.
         * @example 5k2mq0d1-1c
         */
        EventCursor: string;
        /**
         * @description What happened, as `<resource>.<change>`. More types may be added at any time: ignore the ones you do not know.
         * @example book.created
         * @example student.replaced
         */
        EventType: string;
        /**
         * @description A change of a book, in CloudEvents 1.0 attribute names. `data.object` is the book as the change left it, `null` once deleted; `data.revision` is the number in its `ETag`.
         * @example {
         *       "specversion": "1.0",
         *       "id": "5k2mq0d1-1c",
         *       "source": "/books-students-api",
         *       "type": "book.created",
         *       "subject": "/books/0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60",
         *       "time": "2026-11-21T09:30:00.000Z",
         *       "datacontenttype": "application/json",
         *       "data": {
         *         "id": "0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60",
         *         "revision": 1,
         *         "object": {
         *           "book_id": "0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60",
         *           "title": "Dune",
         *           "author": "Frank Herbert",
         *           "isbn": "9780441013593",
         *           "published_year": 1965,
         *           "created_at": "2026-11-21T09:30:00.000Z",
         *           "updated_at": "2026-11-21T09:30:00.000Z"
         *         }
         *       }
         *     }
         */
        BookEvent: {
            /** @constant */
            specversion: "1.0";
            id: components["schemas"]["EventCursor"];
            /** @constant */
            source: "/books-students-api";
            type: string;
            /**
             * @description The book's path.
             * @example /books/0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60
             */
            subject: string;
            time: components["schemas"]["Timestamp"];
            /** @constant */
            datacontenttype: "application/json";
            data: {
                id: components["schemas"]["Id"];
                revision: number;
                object: components["schemas"]["Book"] | null;
            };
        };
        /**
         * @description A change of a student, in CloudEvents 1.0 attribute names. `data.object` is the student as the change left it; `data.revision` is the number in its `ETag`.
         * @example {
         *       "specversion": "1.0",
         *       "id": "5k2mq0d1-1d",
         *       "source": "/books-students-api",
         *       "type": "student.replaced",
         *       "subject": "/api/students/0190a5d2-8f00-7c2d-8a11-5e6f7a8b9c0d",
         *       "time": "2026-11-22T10:00:00.000Z",
         *       "datacontenttype": "application/json",
         *       "data": {
         *         "id": "0190a5d2-8f00-7c2d-8a11-5e6f7a8b9c0d",
         *         "revision": 2,
         *         "object": {
         *           "student_id": "0190a5d2-8f00-7c2d-8a11-5e6f7a8b9c0d",
         *           "name": "Ada Lovelace",
         *           "email": "ada@example.org",
         *           "enrollment_year": 2025,
         *           "status": "graduated",
         *           "created_at": "2026-11-21T09:30:00.000Z",
         *           "updated_at": "2026-11-22T10:00:00.000Z"
         *         }
         *       }
         *     }
         */
        StudentEvent: {
            /** @constant */
            specversion: "1.0";
            id: components["schemas"]["EventCursor"];
            /** @constant */
            source: "/books-students-api";
            type: string;
            /**
             * @description The student's path.
             * @example /api/students/0190a5d2-8f00-7c2d-8a11-5e6f7a8b9c0d
             */
            subject: string;
            time: components["schemas"]["Timestamp"];
            /** @constant */
            datacontenttype: "application/json";
            data: {
                id: components["schemas"]["Id"];
                revision: number;
                object: components["schemas"]["Student"];
            };
        };
        /**
         * @description One change; `type` tells a book's (`book.*`) from a student's (`student.*`). More types may come, of these resources or of others (`OtherEvent`): ignore the ones you do not know. No discriminator mapping closes the list, so a generated client keeps `type` open.
         * @example {
         *       "specversion": "1.0",
         *       "id": "5k2mq0d1-1c",
         *       "source": "/books-students-api",
         *       "type": "book.created",
         *       "subject": "/books/0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60",
         *       "time": "2026-11-21T09:30:00.000Z",
         *       "datacontenttype": "application/json",
         *       "data": {
         *         "id": "0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60",
         *         "revision": 1,
         *         "object": {
         *           "book_id": "0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60",
         *           "title": "Dune",
         *           "author": "Frank Herbert",
         *           "isbn": "9780441013593",
         *           "published_year": 1965,
         *           "created_at": "2026-11-21T09:30:00.000Z",
         *           "updated_at": "2026-11-21T09:30:00.000Z"
         *         }
         *       }
         *     }
         */
        Event: components["schemas"]["BookEvent"] | components["schemas"]["StudentEvent"] | components["schemas"]["OtherEvent"];
        /**
         * @description An event of a resource this version of the contract does not describe (neither `book.*` nor `student.*`), as a later version may send: the CloudEvents 1.0 attributes every event has, `data` left open. Ignore it, or read `type` and `data` as JSON.
         * @example {
         *       "specversion": "1.0",
         *       "id": "5k2mq0d1-1e",
         *       "source": "/books-students-api",
         *       "type": "course.created",
         *       "subject": "/courses/0190a5d2-9a00-7c2d-8a11-5e6f7a8b9c0d",
         *       "time": "2026-11-23T10:00:00.000Z",
         *       "datacontenttype": "application/json",
         *       "data": {
         *         "id": "0190a5d2-9a00-7c2d-8a11-5e6f7a8b9c0d",
         *         "revision": 1
         *       }
         *     }
         */
        OtherEvent: {
            /** @constant */
            specversion: "1.0";
            id: components["schemas"]["EventCursor"];
            /** @constant */
            source: "/books-students-api";
            type: string;
            subject: string;
            time: components["schemas"]["Timestamp"];
            /** @constant */
            datacontenttype: "application/json";
            data: Record<string, never>;
        };
        /**
         * @example {
         *       "items": [
         *         {
         *           "specversion": "1.0",
         *           "id": "5k2mq0d1-1c",
         *           "source": "/books-students-api",
         *           "type": "book.created",
         *           "subject": "/books/0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60",
         *           "time": "2026-11-21T09:30:00.000Z",
         *           "datacontenttype": "application/json",
         *           "data": {
         *             "id": "0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60",
         *             "revision": 1,
         *             "object": {
         *               "book_id": "0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60",
         *               "title": "Dune",
         *               "author": "Frank Herbert",
         *               "isbn": "9780441013593",
         *               "published_year": 1965,
         *               "created_at": "2026-11-21T09:30:00.000Z",
         *               "updated_at": "2026-11-21T09:30:00.000Z"
         *             }
         *           }
         *         }
         *       ],
         *       "next_cursor": "5k2mq0d1-1c"
         *     }
         */
        EventPage: {
            items: components["schemas"]["Event"][];
            next_cursor: components["schemas"]["EventCursor"];
        };
        /**
         * @description One book of an import, as a create takes it; optionally with the id and times of a book exported from a deployment of this service, which are kept (a row without them gets new ones).
         * @example {
         *       "title": "Dune",
         *       "author": "Frank Herbert",
         *       "isbn": "978-0-441-01359-3",
         *       "published_year": 1965
         *     }
         */
        BookImportRow: {
            book_id?: components["schemas"]["Id"];
            title: components["schemas"]["BookInput"]["title"];
            author: components["schemas"]["BookInput"]["author"];
            isbn?: components["schemas"]["BookInput"]["isbn"];
            published_year?: components["schemas"]["BookInput"]["published_year"];
            created_at?: components["schemas"]["Timestamp"];
            updated_at?: components["schemas"]["Timestamp"];
        };
        /**
         * @description One student of an import, as a create takes it; optionally with the id and times of a student exported from a deployment of this service, which are kept.
         * @example {
         *       "name": "Ada Lovelace",
         *       "email": "ada@example.org",
         *       "enrollment_year": 2025
         *     }
         */
        StudentImportRow: {
            student_id?: components["schemas"]["Id"];
            name: components["schemas"]["StudentInput"]["name"];
            email: components["schemas"]["StudentInput"]["email"];
            enrollment_year?: components["schemas"]["StudentInput"]["enrollment_year"];
            status?: components["schemas"]["StudentStatus"];
            created_at?: components["schemas"]["Timestamp"];
            updated_at?: components["schemas"]["Timestamp"];
        };
        /**
         * @description A row the import refused, and why, in the words a single create would use.
         * @example {
         *       "line": 7,
         *       "type": "/problems/validation-error",
         *       "detail": "is not a valid ISBN-10 or ISBN-13: its check digit is wrong",
         *       "pointer": "#/isbn"
         *     }
         */
        ImportProblem: {
            /** @description The row's line in the file (a CSV's header is line 1; a row whose quoted cell spans lines is named by its last line). */
            line: number;
            /**
             * @description `validation-error`: the row breaks the schema; `already-exists`: a unique value (`isbn`, `email`, the id) is held by a stored record or an earlier row of the file; `invalid-import`: the line cannot be read as a row (not JSON; JSON a request body could not be, such as a string that is not Unicode text, a member given twice or `__proto__`, with `pointer` naming where; a CSV row with too many or too few cells).
             * @enum {string}
             */
            type: "/problems/validation-error" | "/problems/already-exists" | "/problems/invalid-import";
            detail: string;
            /** @description The field, as a JSON Pointer into the row, when the problem is about one. */
            pointer?: string;
        };
        /**
         * @example {
         *       "import_id": "0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b61",
         *       "collection": "books",
         *       "mode": "valid",
         *       "format": "csv",
         *       "state": "succeeded",
         *       "cancel_requested": false,
         *       "rows": {
         *         "read": 3,
         *         "written": 2,
         *         "refused": 1
         *       },
         *       "bytes": 148,
         *       "rows_per_second": 61234.5,
         *       "created_at": "2026-11-27T10:00:00.000Z",
         *       "started_at": "2026-11-27T10:00:00.010Z",
         *       "finished_at": "2026-11-27T10:00:00.020Z",
         *       "detail": null,
         *       "problems": [
         *         {
         *           "line": 3,
         *           "type": "/problems/validation-error",
         *           "detail": "is required",
         *           "pointer": "#/author"
         *         }
         *       ],
         *       "problems_omitted": 0
         *     }
         */
        Import: {
            import_id: components["schemas"]["Id"];
            /** @enum {string} */
            collection: "books" | "students";
            /** @enum {string} */
            mode: "all" | "valid";
            /** @enum {string} */
            format: "csv" | "ndjson";
            /**
             * @description `receiving`: the file is being read and checked; `running`: its rows are being written; then one of the three ends. An import whose node stopped while receiving ends `failed` (nothing written); one stopped while running is taken up again where its last batch ended, by this node at its restart or by another node.
             * @enum {string}
             */
            state: "receiving" | "running" | "succeeded" | "failed" | "cancelled";
            cancel_requested: boolean;
            rows: {
                /** @description Rows read from the file. */
                read: number;
                /** @description Records created. */
                written: number;
                refused: number;
            };
            /** @description Bytes of the file read. */
            bytes: number;
            /** @description Rows handled a second, from the start to now or to the end. */
            rows_per_second: number | null;
            created_at: components["schemas"]["Timestamp"];
            /** @description When its rows began to be written; null before. */
            started_at: components["schemas"]["Timestamp"] | null;
            finished_at: components["schemas"]["Timestamp"] | null;
            /** @description Why it failed, when it did. */
            detail: string | null;
            /** @description The refused rows, in line order, up to 1,000. */
            problems: components["schemas"]["ImportProblem"][];
            /** @description Refused rows beyond those listed. */
            problems_omitted: number;
        };
        /**
         * @example {
         *       "items": []
         *     }
         */
        ImportList: {
            items: components["schemas"]["Import"][];
        };
        /**
         * @example {
         *       "url": "https://example.org/hooks/books",
         *       "types": [
         *         "book.created",
         *         "book.replaced",
         *         "book.deleted"
         *       ],
         *       "description": "Search index"
         *     }
         */
        WebhookEndpointInput: {
            /**
             * Format: uri
             * @description Where deliveries are POSTed; `https`, on a public address.
             * @example https://example.org/hooks/books
             */
            url: string;
            /** @description The event types to deliver; each needs the matching read scope on the registering key. */
            types: ("book.created" | "book.replaced" | "book.deleted" | "student.created" | "student.replaced")[];
            /** @description A note for people managing the endpoints. */
            description?: string | null;
        };
        /**
         * @example {
         *       "endpoint_id": "0190a5d2-9a00-7d3e-8b22-6f7a8b9c0d1e",
         *       "url": "https://example.org/hooks/books",
         *       "types": [
         *         "book.created",
         *         "book.replaced",
         *         "book.deleted"
         *       ],
         *       "description": "Search index",
         *       "status": "enabled",
         *       "disabled_reason": null,
         *       "failing_since": null,
         *       "created_at": "2026-11-21T09:30:00.000Z"
         *     }
         */
        WebhookEndpoint: {
            endpoint_id: components["schemas"]["Id"];
            url: string;
            types: components["schemas"]["EventType"][];
            description: string | null;
            /** @enum {string} */
            status: "enabled" | "disabled";
            /** @description Why deliveries stopped: `gone` (the endpoint answered 410), `failing` (every delivery failed for `WEBHOOK_DISABLE_AFTER_HOURS`), `key_revoked` (the registering key was revoked); null while enabled. */
            disabled_reason: ("gone" | "failing" | "key_revoked") | null;
            /** @description When the deliveries started failing without a success since; null while they succeed. */
            failing_since: components["schemas"]["Timestamp"] | null;
            created_at: components["schemas"]["Timestamp"];
        };
        /**
         * @example {
         *       "items": [
         *         {
         *           "endpoint_id": "0190a5d2-9a00-7d3e-8b22-6f7a8b9c0d1e",
         *           "url": "https://example.org/hooks/books",
         *           "types": [
         *             "book.created",
         *             "book.replaced",
         *             "book.deleted"
         *           ],
         *           "description": "Search index",
         *           "status": "enabled",
         *           "disabled_reason": null,
         *           "failing_since": null,
         *           "created_at": "2026-11-21T09:30:00.000Z"
         *         }
         *       ]
         *     }
         */
        WebhookEndpointList: {
            items: components["schemas"]["WebhookEndpoint"][];
        };
        /**
         * @example {
         *       "endpoint": {
         *         "endpoint_id": "0190a5d2-9a00-7d3e-8b22-6f7a8b9c0d1e",
         *         "url": "https://example.org/hooks/books",
         *         "types": [
         *           "book.created",
         *           "book.replaced",
         *           "book.deleted"
         *         ],
         *         "description": "Search index",
         *         "status": "enabled",
         *         "disabled_reason": null,
         *         "failing_since": null,
         *         "created_at": "2026-11-21T09:30:00.000Z"
         *       },
         *       "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
         *       "previous_secret_expires_at": null
         *     }
         */
        WebhookSecret: {
            endpoint: components["schemas"]["WebhookEndpoint"];
            /** @description The signing secret, shown only now. */
            secret: string;
            /** @description Until when deliveries are also signed with the secret this one replaced; null when none is replaced. */
            previous_secret_expires_at: components["schemas"]["Timestamp"] | null;
        };
        /**
         * @description RFC 9457 problem details.
         * @example {
         *       "type": "about:blank",
         *       "title": "Not Found",
         *       "status": 404,
         *       "detail": "No book has the id 0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60",
         *       "instance": "/books/0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60"
         *     }
         */
        Problem: {
            /**
             * @description URI reference naming the kind of problem; `about:blank` when the status says it all. Each `/problems/…` type is listed in this document's `x-problem-types` and resolves to a page that explains it.
             * @example /problems/validation-error
             */
            type: string;
            /** @example Request validation failed */
            title: string;
            /** @example 400 */
            status: number;
            /**
             * @description What went wrong, for people; a detail quoting a longer input is cut, ending in `…`.
             * @example 1 problem in the request body
             */
            detail?: string;
            /**
             * @description The request path (and query) the problem is about; a longer one is cut, ending in `…`.
             * @example /books
             */
            instance?: string;
            /** @description Each problem of a validation failure, at most 100 (the first found); when there were more, `detail` says how many. */
            errors?: components["schemas"]["ProblemError"][];
            /**
             * @description On a 429, the rate-limit policies (as named in `RateLimit-Policy`) the request exceeded.
             * @example [
             *       "anonymous"
             *     ]
             */
            "violated-policies"?: string[];
        };
        /**
         * @example {
         *       "detail": "is required",
         *       "pointer": "#/title"
         *     }
         */
        ProblemError: {
            /** @example is required */
            detail: string;
            /**
             * @description JSON Pointer (URI fragment form) to the offending body member.
             * @example #/title
             */
            pointer?: string;
            /**
             * @description Name of the offending path or query parameter; a longer one is cut, ending in `…`.
             * @example limit
             */
            parameter?: string;
        };
    };
    responses: {
        /** @description The request is malformed; `errors` lists each problem. A body must be I-JSON (RFC 7493): UTF-8 JSON whose strings are Unicode text (a surrogate code point without its pair, such as `"\ud800"`, is refused: it is no character), whose objects name each member once, with no member named `__proto__`, and with arrays and objects nested at most 64 deep; each refusal points at the member (at the first value nested too deep). At most 100 problems are listed. */
        BadRequest: {
            headers: {
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The request is malformed (`errors` lists each problem), or its query cannot be answered: an invalid search, an empty range, a cursor of another query, parameters that do not combine, a search too broad for its sort. `errors[0].parameter` names the parameter to fix. */
        ListBadRequest: {
            headers: {
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The event cursor is older than the events kept, or from another database: events may have been missed. Re-list the records, then follow the feed from the list's `Events-Cursor`. */
        CursorExpired: {
            headers: {
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The caller used up its request quota, or, for an export, already runs as many exports as it may (`EXPORTS_PER_KEY` for an API key, one per address without a key); retry after `Retry-After` seconds. */
        ListTooManyRequests: {
            headers: {
                "Retry-After": components["headers"]["RetryAfter"];
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The caller used up its request quota, or has as many event streams open as it may; retry after `Retry-After` seconds. */
        StreamTooManyRequests: {
            headers: {
                "Retry-After": components["headers"]["RetryAfter"];
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The request is malformed (`errors` lists each problem), or its URL cannot be delivered to. */
        WebhookBadRequest: {
            headers: {
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description This API key, or the deployment, has as many webhook endpoints as it may. */
        TooManyWebhookEndpoints: {
            headers: {
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description No record has this id. */
        NotFound: {
            headers: {
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description No API key was sent (and the operation is not open to anonymous callers), or the key is unknown or revoked. Sent before the body is read, so an anonymous caller learns nothing about it. */
        Unauthorized: {
            headers: {
                "WWW-Authenticate": components["headers"]["WWWAuthenticate"];
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The API key is valid but lacks the scope the operation needs (where book reads are public, a key without `books:read` is served them as an anonymous caller is, not refused). */
        Forbidden: {
            headers: {
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The caller used up its request quota (per API key, or per client address for anonymous calls); retry after `Retry-After` seconds. */
        TooManyRequests: {
            headers: {
                "Retry-After": components["headers"]["RetryAfter"];
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The `Accept` header rules out JSON. */
        NotAcceptable: {
            headers: {
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description Another record already holds a value that must be unique (a book's `isbn`, a student's `email`). */
        Conflict: {
            headers: {
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description Another record already holds a value that must be unique (a book's `isbn`, a student's `email`), or a request with the same `Idempotency-Key` is still being handled. */
        CreateConflict: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The record still has the `ETag` given in `If-None-Match`; no body. */
        NotModified: {
            headers: {
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                ETag: components["headers"]["ETag"];
                [name: string]: unknown;
            };
            content?: never;
        };
        /** @description The record's current `ETag` is not one given in `If-Match` (someone changed it since, or the tags are not the record's); nothing was changed. GET it again, reapply the change, and retry with the new tag. Evaluated before the request body's content (RFC 9110 §13.2.1). */
        PreconditionFailed: {
            headers: {
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The `Idempotency-Key` was already used with a different request body. */
        IdempotencyKeyReused: {
            headers: {
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The file is larger, or has more rows, than one import takes. Nothing was written. */
        ImportTooLarge: {
            headers: {
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description A parameter or header is invalid, or the file's CSV header names fields the collection does not have (or a field twice), each such name said once, the first 100 of them, `detail` counting every column refused. Nothing was written. */
        ImportBadRequest: {
            headers: {
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The first upload with this `Idempotency-Key` is still being received. */
        ImportKeyInUse: {
            headers: {
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The import has already ended. */
        ImportEnded: {
            headers: {
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The body is larger than the server accepts (64 KiB by default). */
        ContentTooLarge: {
            headers: {
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The body is not `application/json`, or is labelled with a charset in which it cannot be UTF-8 (`charset=utf-16`, `utf-32`); other charset labels have no effect (RFC 8259). */
        UnsupportedMediaType: {
            headers: {
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The list page, or an export's first rows, could not be read in time, because the service is busy with other costly lists (on SQLite within `LIST_TIME_BUDGET_MS`, 1 s by default, waiting for a reader included; on PostgreSQL within `PG_STATEMENT_TIMEOUT_MS`, for its turn and for its statement), or the caller already has `LIST_QUEUE_PER_CALLER` (16 by default) costly lists waiting; or, for an export, the server already runs as many exports as it may (`EXPORTS_MAX`, or `EXPORTS_ANONYMOUS` for callers without an API key), or, on SQLite, the exports running hold a write-ahead log grown past its limit. Nothing was changed; retry after `Retry-After` seconds, or narrow the query (a filter, a rarer word) so that it costs less. */
        ListBusy: {
            headers: {
                /** @description Seconds to wait before retrying. */
                "Retry-After": number;
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The client did not send its request headers within `HEADERS_TIMEOUT` or the whole request within `REQUEST_TIMEOUT` (10 s and 30 s by default); the connection is closed. Sent before the request is routed, so it carries no `RateLimit` fields. */
        RequestTimeout: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The request line and headers together exceed 16 KiB (a very long URL or header); the connection is closed. Sent before the request is routed, so it carries no `RateLimit` fields. */
        RequestHeaderFieldsTooLarge: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description Something failed on the server; the detail names a reference to quote, never internals. */
        InternalError: {
            headers: {
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
    };
    parameters: {
        /**
         * @description The book's id, as returned when it was created.
         * @example 0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60
         */
        BookId: components["schemas"]["Id"];
        /**
         * @description The student's id, as returned when they were created.
         * @example 0190a5d2-8f00-7c2d-8a11-5e6f7a8b9c0d
         */
        StudentId: components["schemas"]["Id"];
        /**
         * @description Largest number of records on the page.
         * @example 20
         */
        Limit: number;
        /** @description Opaque position returned as `next_cursor` by the previous page of the same query. Omit it for the first page. It is bound to the query's filters, `q` and `sort` (another query's cursor is a 400 `cursor-mismatch`); `limit` may change between pages. */
        Cursor: string;
        /** @description `true` starts the export with a UTF-8 byte order mark, without which Excel reads the file in the system's legacy encoding. */
        ExportBom: boolean;
        /**
         * @deprecated
         * @description Deprecated with the lists' `Accept: text/csv` (see the operation): `true` starts such an export with a UTF-8 byte order mark. With any other media type, a 400 `unsupported-combination`. The exports take `bom` of their own (`GET /books/export.csv`).
         */
        ListExportBom: boolean;
        /** @description Search titles and authors, ignoring case and accents (`orsted` finds "Ørsted", `strasse` finds "Straße"). Words must all match; `"an exact phrase"` matches within one field; `-word` excludes; `a OR b` matches either (binding tighter than the words around it); `dun*` matches words that start so (at least 2 characters). Punctuation inside a word splits it (`C++` searches `c`). Results come most relevant first (title matches weigh more) unless `sort` is given. A search that cannot be used is a 400 `invalid-search` naming the position. */
        BookSearch: string;
        /**
         * @description Search student names (never emails), ignoring case and accents, with the grammar of `GET /books`: words, `"a phrase"`, `-excluded`, `a OR b`, `prefix*`. Results come most relevant first unless `sort` is given.
         * @example lovelace
         */
        StudentSearch: string;
        /**
         * @description Books by this author, the whole name, ignoring case and accents (`victor hugo` finds "Victor Hugo"). Repeat the parameter for any of several (`author=A&author=B`).
         * @example [
         *       "Frank Herbert"
         *     ]
         */
        Author: string[];
        /**
         * @description The book with this ISBN-13, digits only.
         * @example 9780441013593
         */
        Isbn: string;
        /**
         * @description Books published in this year or later (books without a year are left out).
         * @example 1960
         */
        PublishedYearMin: number;
        /**
         * @description Books published in this year or earlier (books without a year are left out).
         * @example 1970
         */
        PublishedYearMax: number;
        /**
         * @description The student with this email, ignoring letter case.
         * @example ada@example.org
         */
        Email: string;
        /**
         * @description Students with this status; repeat the parameter for any of several.
         * @example [
         *       "graduated"
         *     ]
         */
        Status: components["schemas"]["StudentStatus"][];
        /**
         * @description Students enrolled in this year or later (students without a year are left out).
         * @example 2020
         */
        EnrollmentYearMin: number;
        /**
         * @description Students enrolled in this year or earlier (students without a year are left out).
         * @example 2025
         */
        EnrollmentYearMax: number;
        /**
         * @description Records last changed at or after this instant (RFC 3339, e.g. `2026-11-24T09:30:00Z`). With `sort=updated_at`, the way to sync incrementally: keep the `updated_at` of the last record you saw and ask again from there.
         * @example 2026-11-24T09:30:00Z
         */
        UpdatedSince: string;
        /**
         * @description Records last changed before this instant (RFC 3339); with `updated_since`, a half-open interval.
         * @example 2026-11-25T00:00:00Z
         */
        UpdatedBefore: string;
        /** @description The order: one key, `-` before it for descending. Ties keep creation order in the same direction. `title` and `author` ignore case and accents; `author` orders by author, then title. Books without `published_year` come first ascending and last descending. `relevance` needs `q` and is the default when `q` is given; otherwise the default is `created_at`. `relevance` ranks every match in three tiers: titles that are exactly the words searched (in the order given), then titles holding every searched word or phrase, then the other matches; newest first within a tier. With `q`, sorts other than `relevance` and `created_at` need a search that matches a bounded number of books (else 400 `search-too-broad`). */
        BookSort: "created_at" | "-created_at" | "updated_at" | "-updated_at" | "title" | "-title" | "author" | "-author" | "published_year" | "-published_year" | "relevance";
        /** @description The order: one key, `-` before it for descending. Ties keep creation order in the same direction. `name` ignores case and accents. Students without `enrollment_year` come first ascending and last descending. `relevance` needs `q` and is the default when `q` is given; otherwise the default is `created_at`. `relevance` ranks every match: names that are exactly the words searched (in the order given) first, then the others; newest first within each. */
        StudentSort: "created_at" | "-created_at" | "updated_at" | "-updated_at" | "name" | "-name" | "enrollment_year" | "-enrollment_year" | "relevance";
        /** @description RFC 9110 §13.1.1: proceed only if the record's current `ETag` is one of these (comma-separated) or the value is `*`; otherwise 412 and nothing changes. Weak tags (`W/"…"`) never match. Send the tag exactly as the `ETag` header gave it, double quotes included, e.g. `If-Match: "3-5e6f7a8b9c0d"`; a value that is neither `*` nor quoted tags is a 400. Swagger UI leaves it empty: paste the tag of your own GET. */
        IfMatch: string;
        /** @description RFC 9110 §13.1.2: answer 304 without a body if the record's current `ETag` is one of these (comma-separated) or the value is `*`. Tags are sent as the `ETag` header gave them, double quotes included; a value that is neither `*` nor quoted tags is a 400. */
        IfNoneMatch: string;
        /** @description A fresh key per intended create, such as a new UUID (`"8e03978e-40d5-43e8-bc93-6894a57f9324"`), quoted as a structured-field string (`"…"`) or bare; never a fixed value, which is why Swagger UI leaves this empty. A retry with the same key and the same body answers the stored first response (kept 24 hours by default) and creates nothing; the same key with another body is 422; a retry while the first request is still being handled is 409. Keys are scoped to the operation and to the calling API key. */
        IdempotencyKey: string;
        /** @description An event id, or a `next_cursor` or `Events-Cursor` value: the events after it are returned. Absent: `/events` starts at the oldest event kept, the stream at the newest. Too old, or from another database: 410. */
        EventsAfter: components["schemas"]["EventCursor"];
        /** @description The id of the last event received, as EventSource sends it on reconnection; wins over `after`. */
        LastEventId: components["schemas"]["EventCursor"];
        /**
         * @description Largest number of events on the page.
         * @example 100
         */
        EventLimit: number;
        /**
         * @description Only these event types: comma-separated, and the parameter may repeat (`types=book.created,book.replaced`). Absent: every type the key may read. A type the key may not read is a 403. The pattern names the types this version sends (`EventType`); a later version may accept more.
         * @example [
         *       "book.created"
         *     ]
         */
        EventTypes: string[];
        /**
         * @description The import's id, as its `Location` gave it.
         * @example 0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b61
         */
        ImportId: components["schemas"]["Id"];
        /**
         * @description What the file holds, and where its records go.
         * @example books
         */
        ImportCollection: "books" | "students";
        /**
         * @description `all`: nothing is written unless every row is valid and its unique values free. `valid`: the valid rows are written, the others reported.
         * @example all
         */
        ImportMode: "all" | "valid";
        /**
         * @description The endpoint's id, as returned when it was registered.
         * @example 0190a5d2-9a00-7d3e-8b22-6f7a8b9c0d1e
         */
        WebhookEndpointId: components["schemas"]["Id"];
    };
    requestBodies: {
        /** @description The book's writable fields; the book as a GET returned it (changed) is accepted too. */
        BookReplace: {
            content: {
                /**
                 * @example {
                 *       "title": "Dune",
                 *       "author": "Frank Herbert",
                 *       "isbn": "978-0-441-01359-3",
                 *       "published_year": 1966
                 *     }
                 */
                "application/json": components["schemas"]["BookReplacement"];
            };
        };
        /** @description The student's writable fields; the student as a GET returned them (changed) is accepted too. */
        StudentReplace: {
            content: {
                /**
                 * @example {
                 *       "name": "Ada Lovelace",
                 *       "email": "ada@example.org",
                 *       "enrollment_year": 2025,
                 *       "status": "graduated"
                 *     }
                 */
                "application/json": components["schemas"]["StudentReplacement"];
            };
        };
        BookCreate: {
            content: {
                /**
                 * @example {
                 *       "title": "The Left Hand of Darkness",
                 *       "author": "Ursula K. Le Guin",
                 *       "isbn": "978-0-441-47812-5",
                 *       "published_year": 1969
                 *     }
                 */
                "application/json": components["schemas"]["BookInput"];
            };
        };
        StudentCreate: {
            content: {
                /**
                 * @example {
                 *       "name": "Ada Lovelace",
                 *       "email": "ada@example.org",
                 *       "enrollment_year": 2025,
                 *       "status": "active"
                 *     }
                 */
                "application/json": components["schemas"]["StudentInput"];
            };
        };
    };
    headers: {
        /**
         * @description Strong entity tag of the record; it changes whenever the record changes.
         * @example "3-5e6f7a8b9c0d"
         */
        ETag: string;
        /**
         * @description `true` when this is the stored response of an earlier request with the same `Idempotency-Key`.
         * @example true
         */
        IdempotentReplayed: "true";
        /** @description Path of the created record. */
        Location: string;
        /** @description RFC 8288 link to the next page, present only when there is one: `</books?limit=20&sort=title&cursor=…>; rel="next"`, with every parameter of the request (in a canonical form) and `next_cursor`. */
        Link: string;
        /** @description RFC 9745: this operation, or a parameter or body field the request used (or, on a list, an export asked for with `Accept`), is deprecated (`deprecated: true`) since this moment, given as a structured-field date (`@` and Unix seconds); it may be in the future. The `rel="deprecation"` link says what replaces it. Sent only by deprecated operations, and for a deprecated parameter or field only when the request uses it. */
        Deprecation: string;
        /** @description RFC 8594: from this moment (an HTTP-date, never before `Deprecation`) the deprecated operation, parameter or field may stop working. Absent while no date is set. */
        Sunset: string;
        /** @description RFC 8288 link to the notes of a deprecation, sent as `Link` beside `Deprecation`: `</docs#/<tag>/<operationId>>; rel="deprecation"; type="text/html"`, the operation in Swagger UI, whose description names the replacement and the dates. On a page of a list it follows the `rel="next"` link, comma-separated. */
        DeprecationLink: string;
        /** @description The quota that applies to this caller (draft-ietf-httpapi-ratelimit-headers-11): `"keyed"` for calls with an API key, `"anonymous"` for the others, with `q` requests per `w` seconds. */
        RateLimitPolicy: string;
        /** @description What is left of the quota (draft-ietf-httpapi-ratelimit-headers-11): `r` requests remaining, `t` seconds until the window resets. */
        RateLimit: string;
        /** @description Seconds to wait before the quota resets. */
        RetryAfter: number;
        /** @description The authentication scheme to use (RFC 6750). */
        WWWAuthenticate: string;
        /** @description The position of the change feed read just before this page (for an export, in its snapshot). Follow `/events` or `/events/stream` with `after=<this value>` to receive every change made after the page or export was read, so that list-then-follow misses nothing (a change already in the page may come again: drop an event whose `data.revision` you hold, or apply it again, since an event carries the whole record). Sent only to a caller whose API key may read what is listed (following the feed needs one; a key without the scope, served a public book read, is answered as an anonymous caller is), since positions are one sequence for all changes, whatever the caller may read: this one moves with every write, student writes included, so that a key can tell how often the service is written to, never what was written (docs/security.md, "What feed positions tell"). */
        EventsCursor: components["schemas"]["EventCursor"];
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    listBooks: {
        parameters: {
            query?: {
                /**
                 * @description Largest number of records on the page.
                 * @example 20
                 */
                limit?: components["parameters"]["Limit"];
                /** @description Opaque position returned as `next_cursor` by the previous page of the same query. Omit it for the first page. It is bound to the query's filters, `q` and `sort` (another query's cursor is a 400 `cursor-mismatch`); `limit` may change between pages. */
                cursor?: components["parameters"]["Cursor"];
                /** @description Search titles and authors, ignoring case and accents (`orsted` finds "Ørsted", `strasse` finds "Straße"). Words must all match; `"an exact phrase"` matches within one field; `-word` excludes; `a OR b` matches either (binding tighter than the words around it); `dun*` matches words that start so (at least 2 characters). Punctuation inside a word splits it (`C++` searches `c`). Results come most relevant first (title matches weigh more) unless `sort` is given. A search that cannot be used is a 400 `invalid-search` naming the position. */
                q?: components["parameters"]["BookSearch"];
                /**
                 * @description Books by this author, the whole name, ignoring case and accents (`victor hugo` finds "Victor Hugo"). Repeat the parameter for any of several (`author=A&author=B`).
                 * @example [
                 *       "Frank Herbert"
                 *     ]
                 */
                author?: components["parameters"]["Author"];
                /**
                 * @description The book with this ISBN-13, digits only.
                 * @example 9780441013593
                 */
                isbn?: components["parameters"]["Isbn"];
                /**
                 * @description Books published in this year or later (books without a year are left out).
                 * @example 1960
                 */
                published_year_min?: components["parameters"]["PublishedYearMin"];
                /**
                 * @description Books published in this year or earlier (books without a year are left out).
                 * @example 1970
                 */
                published_year_max?: components["parameters"]["PublishedYearMax"];
                /**
                 * @description Records last changed at or after this instant (RFC 3339, e.g. `2026-11-24T09:30:00Z`). With `sort=updated_at`, the way to sync incrementally: keep the `updated_at` of the last record you saw and ask again from there.
                 * @example 2026-11-24T09:30:00Z
                 */
                updated_since?: components["parameters"]["UpdatedSince"];
                /**
                 * @description Records last changed before this instant (RFC 3339); with `updated_since`, a half-open interval.
                 * @example 2026-11-25T00:00:00Z
                 */
                updated_before?: components["parameters"]["UpdatedBefore"];
                /** @description The order: one key, `-` before it for descending. Ties keep creation order in the same direction. `title` and `author` ignore case and accents; `author` orders by author, then title. Books without `published_year` come first ascending and last descending. `relevance` needs `q` and is the default when `q` is given; otherwise the default is `created_at`. `relevance` ranks every match in three tiers: titles that are exactly the words searched (in the order given), then titles holding every searched word or phrase, then the other matches; newest first within a tier. With `q`, sorts other than `relevance` and `created_at` need a search that matches a bounded number of books (else 400 `search-too-broad`). */
                sort?: components["parameters"]["BookSort"];
                /**
                 * @deprecated
                 * @description Deprecated with the lists' `Accept: text/csv` (see the operation): `true` starts such an export with a UTF-8 byte order mark. With any other media type, a 400 `unsupported-combination`. The exports take `bom` of their own (`GET /books/export.csv`).
                 */
                bom?: components["parameters"]["ListExportBom"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of books. */
            200: {
                headers: {
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "Events-Cursor": components["headers"]["EventsCursor"];
                    Link: components["headers"]["Link"];
                    Deprecation: components["headers"]["Deprecation"];
                    Sunset: components["headers"]["Sunset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BookPage"];
                };
            };
            400: components["responses"]["ListBadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            406: components["responses"]["NotAcceptable"];
            408: components["responses"]["RequestTimeout"];
            429: components["responses"]["ListTooManyRequests"];
            431: components["responses"]["RequestHeaderFieldsTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ListBusy"];
        };
    };
    createBook: {
        parameters: {
            query?: never;
            header?: {
                /** @description A fresh key per intended create, such as a new UUID (`"8e03978e-40d5-43e8-bc93-6894a57f9324"`), quoted as a structured-field string (`"…"`) or bare; never a fixed value, which is why Swagger UI leaves this empty. A retry with the same key and the same body answers the stored first response (kept 24 hours by default) and creates nothing; the same key with another body is 422; a retry while the first request is still being handled is 409. Keys are scoped to the operation and to the calling API key. */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: components["requestBodies"]["BookCreate"];
        responses: {
            /** @description The book was created (or, for a retried `Idempotency-Key`, the stored first response). */
            201: {
                headers: {
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    RateLimit: components["headers"]["RateLimit"];
                    Location: components["headers"]["Location"];
                    ETag: components["headers"]["ETag"];
                    "Idempotent-Replayed": components["headers"]["IdempotentReplayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Book"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            406: components["responses"]["NotAcceptable"];
            408: components["responses"]["RequestTimeout"];
            409: components["responses"]["CreateConflict"];
            413: components["responses"]["ContentTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["IdempotencyKeyReused"];
            429: components["responses"]["TooManyRequests"];
            431: components["responses"]["RequestHeaderFieldsTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    getBook: {
        parameters: {
            query?: never;
            header?: {
                /** @description RFC 9110 §13.1.2: answer 304 without a body if the record's current `ETag` is one of these (comma-separated) or the value is `*`. Tags are sent as the `ETag` header gave them, double quotes included; a value that is neither `*` nor quoted tags is a 400. */
                "If-None-Match"?: components["parameters"]["IfNoneMatch"];
            };
            path: {
                /**
                 * @description The book's id, as returned when it was created.
                 * @example 0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60
                 */
                book_id: components["parameters"]["BookId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The book. */
            200: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Book"];
                };
            };
            304: components["responses"]["NotModified"];
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            406: components["responses"]["NotAcceptable"];
            408: components["responses"]["RequestTimeout"];
            429: components["responses"]["TooManyRequests"];
            431: components["responses"]["RequestHeaderFieldsTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    updateBook: {
        parameters: {
            query?: never;
            header?: {
                /** @description RFC 9110 §13.1.1: proceed only if the record's current `ETag` is one of these (comma-separated) or the value is `*`; otherwise 412 and nothing changes. Weak tags (`W/"…"`) never match. Send the tag exactly as the `ETag` header gave it, double quotes included, e.g. `If-Match: "3-5e6f7a8b9c0d"`; a value that is neither `*` nor quoted tags is a 400. Swagger UI leaves it empty: paste the tag of your own GET. */
                "If-Match"?: components["parameters"]["IfMatch"];
            };
            path: {
                /**
                 * @description The book's id, as returned when it was created.
                 * @example 0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60
                 */
                book_id: components["parameters"]["BookId"];
            };
            cookie?: never;
        };
        requestBody: components["requestBodies"]["BookReplace"];
        responses: {
            /** @description The book as stored after the update. */
            200: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Book"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            406: components["responses"]["NotAcceptable"];
            408: components["responses"]["RequestTimeout"];
            409: components["responses"]["Conflict"];
            412: components["responses"]["PreconditionFailed"];
            413: components["responses"]["ContentTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            431: components["responses"]["RequestHeaderFieldsTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    deleteBook: {
        parameters: {
            query?: never;
            header?: {
                /** @description RFC 9110 §13.1.1: proceed only if the record's current `ETag` is one of these (comma-separated) or the value is `*`; otherwise 412 and nothing changes. Weak tags (`W/"…"`) never match. Send the tag exactly as the `ETag` header gave it, double quotes included, e.g. `If-Match: "3-5e6f7a8b9c0d"`; a value that is neither `*` nor quoted tags is a 400. Swagger UI leaves it empty: paste the tag of your own GET. */
                "If-Match"?: components["parameters"]["IfMatch"];
            };
            path: {
                /**
                 * @description The book's id, as returned when it was created.
                 * @example 0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60
                 */
                book_id: components["parameters"]["BookId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The book was deleted. */
            204: {
                headers: {
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            406: components["responses"]["NotAcceptable"];
            408: components["responses"]["RequestTimeout"];
            412: components["responses"]["PreconditionFailed"];
            413: components["responses"]["ContentTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            431: components["responses"]["RequestHeaderFieldsTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    exportBooksCsv: {
        parameters: {
            query?: {
                /** @description Search titles and authors, ignoring case and accents (`orsted` finds "Ørsted", `strasse` finds "Straße"). Words must all match; `"an exact phrase"` matches within one field; `-word` excludes; `a OR b` matches either (binding tighter than the words around it); `dun*` matches words that start so (at least 2 characters). Punctuation inside a word splits it (`C++` searches `c`). Results come most relevant first (title matches weigh more) unless `sort` is given. A search that cannot be used is a 400 `invalid-search` naming the position. */
                q?: components["parameters"]["BookSearch"];
                /**
                 * @description Books by this author, the whole name, ignoring case and accents (`victor hugo` finds "Victor Hugo"). Repeat the parameter for any of several (`author=A&author=B`).
                 * @example [
                 *       "Frank Herbert"
                 *     ]
                 */
                author?: components["parameters"]["Author"];
                /**
                 * @description The book with this ISBN-13, digits only.
                 * @example 9780441013593
                 */
                isbn?: components["parameters"]["Isbn"];
                /**
                 * @description Books published in this year or later (books without a year are left out).
                 * @example 1960
                 */
                published_year_min?: components["parameters"]["PublishedYearMin"];
                /**
                 * @description Books published in this year or earlier (books without a year are left out).
                 * @example 1970
                 */
                published_year_max?: components["parameters"]["PublishedYearMax"];
                /**
                 * @description Records last changed at or after this instant (RFC 3339, e.g. `2026-11-24T09:30:00Z`). With `sort=updated_at`, the way to sync incrementally: keep the `updated_at` of the last record you saw and ask again from there.
                 * @example 2026-11-24T09:30:00Z
                 */
                updated_since?: components["parameters"]["UpdatedSince"];
                /**
                 * @description Records last changed before this instant (RFC 3339); with `updated_since`, a half-open interval.
                 * @example 2026-11-25T00:00:00Z
                 */
                updated_before?: components["parameters"]["UpdatedBefore"];
                /** @description The order: one key, `-` before it for descending. Ties keep creation order in the same direction. `title` and `author` ignore case and accents; `author` orders by author, then title. Books without `published_year` come first ascending and last descending. `relevance` needs `q` and is the default when `q` is given; otherwise the default is `created_at`. `relevance` ranks every match in three tiers: titles that are exactly the words searched (in the order given), then titles holding every searched word or phrase, then the other matches; newest first within a tier. With `q`, sorts other than `relevance` and `created_at` need a search that matches a bounded number of books (else 400 `search-too-broad`). */
                sort?: components["parameters"]["BookSort"];
                /** @description `true` starts the export with a UTF-8 byte order mark, without which Excel reads the file in the system's legacy encoding. */
                bom?: components["parameters"]["ExportBom"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /**
             * @description RFC 4180 (`text/csv; charset=utf-8; header=present`), CRLF line ends, UTF-8 (with
             *     `bom=true`, a byte order mark first, for Excel). A header row names the fields, then one
             *     row per book; an empty cell is `null`. A text cell starting with `=`, `+`, `-`, `@`, a
             *     tab or a carriage return, after any number of `'`, gets one more `'` in front (OWASP's
             *     advice against formula injection), which an import takes off again.
             */
            200: {
                headers: {
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "Events-Cursor": components["headers"]["EventsCursor"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example book_id,title,author,isbn,published_year,created_at,updated_at
                     *     0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60,Dune,Frank Herbert,9780441013593,1965,2026-11-21T09:30:00.000Z,2026-11-21T09:30:00.000Z
                     *     0190a5d3-1a2b-7c3d-8e4f-5a6b7c8d9e0f,"'=Sums, and how to check them",Ada Lovelace,,1843,2026-11-21T09:31:00.000Z,2026-11-21T09:31:00.000Z
                     */
                    "text/csv": string;
                };
            };
            400: components["responses"]["ListBadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            406: components["responses"]["NotAcceptable"];
            408: components["responses"]["RequestTimeout"];
            429: components["responses"]["ListTooManyRequests"];
            431: components["responses"]["RequestHeaderFieldsTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ListBusy"];
        };
    };
    exportBooksNdjson: {
        parameters: {
            query?: {
                /** @description Search titles and authors, ignoring case and accents (`orsted` finds "Ørsted", `strasse` finds "Straße"). Words must all match; `"an exact phrase"` matches within one field; `-word` excludes; `a OR b` matches either (binding tighter than the words around it); `dun*` matches words that start so (at least 2 characters). Punctuation inside a word splits it (`C++` searches `c`). Results come most relevant first (title matches weigh more) unless `sort` is given. A search that cannot be used is a 400 `invalid-search` naming the position. */
                q?: components["parameters"]["BookSearch"];
                /**
                 * @description Books by this author, the whole name, ignoring case and accents (`victor hugo` finds "Victor Hugo"). Repeat the parameter for any of several (`author=A&author=B`).
                 * @example [
                 *       "Frank Herbert"
                 *     ]
                 */
                author?: components["parameters"]["Author"];
                /**
                 * @description The book with this ISBN-13, digits only.
                 * @example 9780441013593
                 */
                isbn?: components["parameters"]["Isbn"];
                /**
                 * @description Books published in this year or later (books without a year are left out).
                 * @example 1960
                 */
                published_year_min?: components["parameters"]["PublishedYearMin"];
                /**
                 * @description Books published in this year or earlier (books without a year are left out).
                 * @example 1970
                 */
                published_year_max?: components["parameters"]["PublishedYearMax"];
                /**
                 * @description Records last changed at or after this instant (RFC 3339, e.g. `2026-11-24T09:30:00Z`). With `sort=updated_at`, the way to sync incrementally: keep the `updated_at` of the last record you saw and ask again from there.
                 * @example 2026-11-24T09:30:00Z
                 */
                updated_since?: components["parameters"]["UpdatedSince"];
                /**
                 * @description Records last changed before this instant (RFC 3339); with `updated_since`, a half-open interval.
                 * @example 2026-11-25T00:00:00Z
                 */
                updated_before?: components["parameters"]["UpdatedBefore"];
                /** @description The order: one key, `-` before it for descending. Ties keep creation order in the same direction. `title` and `author` ignore case and accents; `author` orders by author, then title. Books without `published_year` come first ascending and last descending. `relevance` needs `q` and is the default when `q` is given; otherwise the default is `created_at`. `relevance` ranks every match in three tiers: titles that are exactly the words searched (in the order given), then titles holding every searched word or phrase, then the other matches; newest first within a tier. With `q`, sorts other than `relevance` and `created_at` need a search that matches a bounded number of books (else 400 `search-too-broad`). */
                sort?: components["parameters"]["BookSort"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description NDJSON (`application/x-ndjson`): one book per line, as the JSON list gives it (a `Book`), each line ended by a line feed. */
            200: {
                headers: {
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "Events-Cursor": components["headers"]["EventsCursor"];
                    [name: string]: unknown;
                };
                content: {
                    /** @example {"book_id":"0190a5d3-1a2b-7c3d-8e4f-5a6b7c8d9e0f","title":"=Sums, and how to check them","author":"Ada Lovelace","isbn":null,"published_year":1843,"created_at":"2026-11-21T09:31:00.000Z","updated_at":"2026-11-21T09:31:00.000Z"} */
                    "application/x-ndjson": string;
                };
            };
            400: components["responses"]["ListBadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            406: components["responses"]["NotAcceptable"];
            408: components["responses"]["RequestTimeout"];
            429: components["responses"]["ListTooManyRequests"];
            431: components["responses"]["RequestHeaderFieldsTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ListBusy"];
        };
    };
    listStudents: {
        parameters: {
            query?: {
                /**
                 * @description Largest number of records on the page.
                 * @example 20
                 */
                limit?: components["parameters"]["Limit"];
                /** @description Opaque position returned as `next_cursor` by the previous page of the same query. Omit it for the first page. It is bound to the query's filters, `q` and `sort` (another query's cursor is a 400 `cursor-mismatch`); `limit` may change between pages. */
                cursor?: components["parameters"]["Cursor"];
                /**
                 * @description Search student names (never emails), ignoring case and accents, with the grammar of `GET /books`: words, `"a phrase"`, `-excluded`, `a OR b`, `prefix*`. Results come most relevant first unless `sort` is given.
                 * @example lovelace
                 */
                q?: components["parameters"]["StudentSearch"];
                /**
                 * @description The student with this email, ignoring letter case.
                 * @example ada@example.org
                 */
                email?: components["parameters"]["Email"];
                /**
                 * @description Students with this status; repeat the parameter for any of several.
                 * @example [
                 *       "graduated"
                 *     ]
                 */
                status?: components["parameters"]["Status"];
                /**
                 * @description Students enrolled in this year or later (students without a year are left out).
                 * @example 2020
                 */
                enrollment_year_min?: components["parameters"]["EnrollmentYearMin"];
                /**
                 * @description Students enrolled in this year or earlier (students without a year are left out).
                 * @example 2025
                 */
                enrollment_year_max?: components["parameters"]["EnrollmentYearMax"];
                /**
                 * @description Records last changed at or after this instant (RFC 3339, e.g. `2026-11-24T09:30:00Z`). With `sort=updated_at`, the way to sync incrementally: keep the `updated_at` of the last record you saw and ask again from there.
                 * @example 2026-11-24T09:30:00Z
                 */
                updated_since?: components["parameters"]["UpdatedSince"];
                /**
                 * @description Records last changed before this instant (RFC 3339); with `updated_since`, a half-open interval.
                 * @example 2026-11-25T00:00:00Z
                 */
                updated_before?: components["parameters"]["UpdatedBefore"];
                /** @description The order: one key, `-` before it for descending. Ties keep creation order in the same direction. `name` ignores case and accents. Students without `enrollment_year` come first ascending and last descending. `relevance` needs `q` and is the default when `q` is given; otherwise the default is `created_at`. `relevance` ranks every match: names that are exactly the words searched (in the order given) first, then the others; newest first within each. */
                sort?: components["parameters"]["StudentSort"];
                /**
                 * @deprecated
                 * @description Deprecated with the lists' `Accept: text/csv` (see the operation): `true` starts such an export with a UTF-8 byte order mark. With any other media type, a 400 `unsupported-combination`. The exports take `bom` of their own (`GET /books/export.csv`).
                 */
                bom?: components["parameters"]["ListExportBom"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of students. */
            200: {
                headers: {
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "Events-Cursor": components["headers"]["EventsCursor"];
                    Link: components["headers"]["Link"];
                    Deprecation: components["headers"]["Deprecation"];
                    Sunset: components["headers"]["Sunset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StudentPage"];
                };
            };
            400: components["responses"]["ListBadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            406: components["responses"]["NotAcceptable"];
            408: components["responses"]["RequestTimeout"];
            429: components["responses"]["ListTooManyRequests"];
            431: components["responses"]["RequestHeaderFieldsTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ListBusy"];
        };
    };
    createStudent: {
        parameters: {
            query?: never;
            header?: {
                /** @description A fresh key per intended create, such as a new UUID (`"8e03978e-40d5-43e8-bc93-6894a57f9324"`), quoted as a structured-field string (`"…"`) or bare; never a fixed value, which is why Swagger UI leaves this empty. A retry with the same key and the same body answers the stored first response (kept 24 hours by default) and creates nothing; the same key with another body is 422; a retry while the first request is still being handled is 409. Keys are scoped to the operation and to the calling API key. */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: components["requestBodies"]["StudentCreate"];
        responses: {
            /** @description The student was created (or, for a retried `Idempotency-Key`, the stored first response). */
            201: {
                headers: {
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    RateLimit: components["headers"]["RateLimit"];
                    Location: components["headers"]["Location"];
                    ETag: components["headers"]["ETag"];
                    "Idempotent-Replayed": components["headers"]["IdempotentReplayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Student"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            406: components["responses"]["NotAcceptable"];
            408: components["responses"]["RequestTimeout"];
            409: components["responses"]["CreateConflict"];
            413: components["responses"]["ContentTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["IdempotencyKeyReused"];
            429: components["responses"]["TooManyRequests"];
            431: components["responses"]["RequestHeaderFieldsTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    getStudent: {
        parameters: {
            query?: never;
            header?: {
                /** @description RFC 9110 §13.1.2: answer 304 without a body if the record's current `ETag` is one of these (comma-separated) or the value is `*`. Tags are sent as the `ETag` header gave them, double quotes included; a value that is neither `*` nor quoted tags is a 400. */
                "If-None-Match"?: components["parameters"]["IfNoneMatch"];
            };
            path: {
                /**
                 * @description The student's id, as returned when they were created.
                 * @example 0190a5d2-8f00-7c2d-8a11-5e6f7a8b9c0d
                 */
                student_id: components["parameters"]["StudentId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The student. */
            200: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Student"];
                };
            };
            304: components["responses"]["NotModified"];
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            406: components["responses"]["NotAcceptable"];
            408: components["responses"]["RequestTimeout"];
            429: components["responses"]["TooManyRequests"];
            431: components["responses"]["RequestHeaderFieldsTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    updateStudent: {
        parameters: {
            query?: never;
            header?: {
                /** @description RFC 9110 §13.1.1: proceed only if the record's current `ETag` is one of these (comma-separated) or the value is `*`; otherwise 412 and nothing changes. Weak tags (`W/"…"`) never match. Send the tag exactly as the `ETag` header gave it, double quotes included, e.g. `If-Match: "3-5e6f7a8b9c0d"`; a value that is neither `*` nor quoted tags is a 400. Swagger UI leaves it empty: paste the tag of your own GET. */
                "If-Match"?: components["parameters"]["IfMatch"];
            };
            path: {
                /**
                 * @description The student's id, as returned when they were created.
                 * @example 0190a5d2-8f00-7c2d-8a11-5e6f7a8b9c0d
                 */
                student_id: components["parameters"]["StudentId"];
            };
            cookie?: never;
        };
        requestBody: components["requestBodies"]["StudentReplace"];
        responses: {
            /** @description The student as stored after the update. */
            200: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Student"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            406: components["responses"]["NotAcceptable"];
            408: components["responses"]["RequestTimeout"];
            409: components["responses"]["Conflict"];
            412: components["responses"]["PreconditionFailed"];
            413: components["responses"]["ContentTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            431: components["responses"]["RequestHeaderFieldsTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    exportStudentsCsv: {
        parameters: {
            query?: {
                /**
                 * @description Search student names (never emails), ignoring case and accents, with the grammar of `GET /books`: words, `"a phrase"`, `-excluded`, `a OR b`, `prefix*`. Results come most relevant first unless `sort` is given.
                 * @example lovelace
                 */
                q?: components["parameters"]["StudentSearch"];
                /**
                 * @description The student with this email, ignoring letter case.
                 * @example ada@example.org
                 */
                email?: components["parameters"]["Email"];
                /**
                 * @description Students with this status; repeat the parameter for any of several.
                 * @example [
                 *       "graduated"
                 *     ]
                 */
                status?: components["parameters"]["Status"];
                /**
                 * @description Students enrolled in this year or later (students without a year are left out).
                 * @example 2020
                 */
                enrollment_year_min?: components["parameters"]["EnrollmentYearMin"];
                /**
                 * @description Students enrolled in this year or earlier (students without a year are left out).
                 * @example 2025
                 */
                enrollment_year_max?: components["parameters"]["EnrollmentYearMax"];
                /**
                 * @description Records last changed at or after this instant (RFC 3339, e.g. `2026-11-24T09:30:00Z`). With `sort=updated_at`, the way to sync incrementally: keep the `updated_at` of the last record you saw and ask again from there.
                 * @example 2026-11-24T09:30:00Z
                 */
                updated_since?: components["parameters"]["UpdatedSince"];
                /**
                 * @description Records last changed before this instant (RFC 3339); with `updated_since`, a half-open interval.
                 * @example 2026-11-25T00:00:00Z
                 */
                updated_before?: components["parameters"]["UpdatedBefore"];
                /** @description The order: one key, `-` before it for descending. Ties keep creation order in the same direction. `name` ignores case and accents. Students without `enrollment_year` come first ascending and last descending. `relevance` needs `q` and is the default when `q` is given; otherwise the default is `created_at`. `relevance` ranks every match: names that are exactly the words searched (in the order given) first, then the others; newest first within each. */
                sort?: components["parameters"]["StudentSort"];
                /** @description `true` starts the export with a UTF-8 byte order mark, without which Excel reads the file in the system's legacy encoding. */
                bom?: components["parameters"]["ExportBom"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /**
             * @description RFC 4180 (`text/csv; charset=utf-8; header=present`), CRLF line ends, UTF-8 (with
             *     `bom=true`, a byte order mark first, for Excel). A header row names the fields, then one
             *     row per student; an empty cell is `null`. A text cell starting with `=`, `+`, `-`, `@`, a
             *     tab or a carriage return, after any number of `'`, gets one more `'` in front (OWASP's
             *     advice against formula injection), which an import takes off again.
             */
            200: {
                headers: {
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "Events-Cursor": components["headers"]["EventsCursor"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example student_id,name,email,enrollment_year,status,created_at,updated_at
                     *     0190a5d4-2b3c-7d4e-9f5a-6b7c8d9e0f1a,Ada Lovelace,ada@example.org,2024,active,2026-11-21T09:30:00.000Z,2026-11-21T09:30:00.000Z
                     */
                    "text/csv": string;
                };
            };
            400: components["responses"]["ListBadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            406: components["responses"]["NotAcceptable"];
            408: components["responses"]["RequestTimeout"];
            429: components["responses"]["ListTooManyRequests"];
            431: components["responses"]["RequestHeaderFieldsTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ListBusy"];
        };
    };
    exportStudentsNdjson: {
        parameters: {
            query?: {
                /**
                 * @description Search student names (never emails), ignoring case and accents, with the grammar of `GET /books`: words, `"a phrase"`, `-excluded`, `a OR b`, `prefix*`. Results come most relevant first unless `sort` is given.
                 * @example lovelace
                 */
                q?: components["parameters"]["StudentSearch"];
                /**
                 * @description The student with this email, ignoring letter case.
                 * @example ada@example.org
                 */
                email?: components["parameters"]["Email"];
                /**
                 * @description Students with this status; repeat the parameter for any of several.
                 * @example [
                 *       "graduated"
                 *     ]
                 */
                status?: components["parameters"]["Status"];
                /**
                 * @description Students enrolled in this year or later (students without a year are left out).
                 * @example 2020
                 */
                enrollment_year_min?: components["parameters"]["EnrollmentYearMin"];
                /**
                 * @description Students enrolled in this year or earlier (students without a year are left out).
                 * @example 2025
                 */
                enrollment_year_max?: components["parameters"]["EnrollmentYearMax"];
                /**
                 * @description Records last changed at or after this instant (RFC 3339, e.g. `2026-11-24T09:30:00Z`). With `sort=updated_at`, the way to sync incrementally: keep the `updated_at` of the last record you saw and ask again from there.
                 * @example 2026-11-24T09:30:00Z
                 */
                updated_since?: components["parameters"]["UpdatedSince"];
                /**
                 * @description Records last changed before this instant (RFC 3339); with `updated_since`, a half-open interval.
                 * @example 2026-11-25T00:00:00Z
                 */
                updated_before?: components["parameters"]["UpdatedBefore"];
                /** @description The order: one key, `-` before it for descending. Ties keep creation order in the same direction. `name` ignores case and accents. Students without `enrollment_year` come first ascending and last descending. `relevance` needs `q` and is the default when `q` is given; otherwise the default is `created_at`. `relevance` ranks every match: names that are exactly the words searched (in the order given) first, then the others; newest first within each. */
                sort?: components["parameters"]["StudentSort"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description NDJSON (`application/x-ndjson`): one student per line, as the JSON list gives it (a `Student`), each line ended by a line feed. */
            200: {
                headers: {
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "Events-Cursor": components["headers"]["EventsCursor"];
                    [name: string]: unknown;
                };
                content: {
                    /** @example {"student_id":"0190a5d4-2b3c-7d4e-9f5a-6b7c8d9e0f1a","name":"Ada Lovelace","email":"ada@example.org","enrollment_year":2024,"status":"active","created_at":"2026-11-21T09:30:00.000Z","updated_at":"2026-11-21T09:30:00.000Z"} */
                    "application/x-ndjson": string;
                };
            };
            400: components["responses"]["ListBadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            406: components["responses"]["NotAcceptable"];
            408: components["responses"]["RequestTimeout"];
            429: components["responses"]["ListTooManyRequests"];
            431: components["responses"]["RequestHeaderFieldsTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ListBusy"];
        };
    };
    listEvents: {
        parameters: {
            query?: {
                /** @description An event id, or a `next_cursor` or `Events-Cursor` value: the events after it are returned. Absent: `/events` starts at the oldest event kept, the stream at the newest. Too old, or from another database: 410. */
                after?: components["parameters"]["EventsAfter"];
                /**
                 * @description Largest number of events on the page.
                 * @example 100
                 */
                limit?: components["parameters"]["EventLimit"];
                /**
                 * @description Only these event types: comma-separated, and the parameter may repeat (`types=book.created,book.replaced`). Absent: every type the key may read. A type the key may not read is a 403. The pattern names the types this version sends (`EventType`); a later version may accept more.
                 * @example [
                 *       "book.created"
                 *     ]
                 */
                types?: components["parameters"]["EventTypes"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of events. */
            200: {
                headers: {
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EventPage"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            406: components["responses"]["NotAcceptable"];
            408: components["responses"]["RequestTimeout"];
            410: components["responses"]["CursorExpired"];
            429: components["responses"]["TooManyRequests"];
            431: components["responses"]["RequestHeaderFieldsTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    streamEvents: {
        parameters: {
            query?: {
                /** @description An event id, or a `next_cursor` or `Events-Cursor` value: the events after it are returned. Absent: `/events` starts at the oldest event kept, the stream at the newest. Too old, or from another database: 410. */
                after?: components["parameters"]["EventsAfter"];
                /**
                 * @description Only these event types: comma-separated, and the parameter may repeat (`types=book.created,book.replaced`). Absent: every type the key may read. A type the key may not read is a 403. The pattern names the types this version sends (`EventType`); a later version may accept more.
                 * @example [
                 *       "book.created"
                 *     ]
                 */
                types?: components["parameters"]["EventTypes"];
            };
            header?: {
                /** @description The id of the last event received, as EventSource sends it on reconnection; wins over `after`. */
                "Last-Event-ID"?: components["parameters"]["LastEventId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /**
             * @description The stream: `retry:`, then frames `id: <event id>`, `event: <type>`, `data: <Event JSON>`
             *     (the schema below describes each frame's data), comments as heartbeats. For example:
             *
             *     ```
             *     retry: 3000
             *
             *     id: 5k2mq0d1-1c
             *     event: book.created
             *     data: {"specversion":"1.0","id":"5k2mq0d1-1c","source":"/books-students-api","type":"book.created","subject":"/books/0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60","time":"2026-11-21T09:30:00.000Z","datacontenttype":"application/json","data":{"id":"0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60","revision":1,"object":{"book_id":"0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b60","title":"Dune","author":"Frank Herbert","isbn":"9780441013593","published_year":1965,"created_at":"2026-11-21T09:30:00.000Z","updated_at":"2026-11-21T09:30:00.000Z"}}}
             *
             *     : heartbeat
             *     ```
             */
            200: {
                headers: {
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": components["schemas"]["Event"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            406: components["responses"]["NotAcceptable"];
            408: components["responses"]["RequestTimeout"];
            410: components["responses"]["CursorExpired"];
            429: components["responses"]["StreamTooManyRequests"];
            431: components["responses"]["RequestHeaderFieldsTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    listImports: {
        parameters: {
            query?: {
                /**
                 * @description Largest number of records on the page.
                 * @example 20
                 */
                limit?: components["parameters"]["Limit"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The imports. */
            200: {
                headers: {
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ImportList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            406: components["responses"]["NotAcceptable"];
            408: components["responses"]["RequestTimeout"];
            429: components["responses"]["TooManyRequests"];
            431: components["responses"]["RequestHeaderFieldsTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    createImport: {
        parameters: {
            query: {
                /**
                 * @description What the file holds, and where its records go.
                 * @example books
                 */
                collection: components["parameters"]["ImportCollection"];
                /**
                 * @description `all`: nothing is written unless every row is valid and its unique values free. `valid`: the valid rows are written, the others reported.
                 * @example all
                 */
                mode?: components["parameters"]["ImportMode"];
            };
            header?: {
                /** @description A fresh key per intended create, such as a new UUID (`"8e03978e-40d5-43e8-bc93-6894a57f9324"`), quoted as a structured-field string (`"…"`) or bare; never a fixed value, which is why Swagger UI leaves this empty. A retry with the same key and the same body answers the stored first response (kept 24 hours by default) and creates nothing; the same key with another body is 422; a retry while the first request is still being handled is 409. Keys are scoped to the operation and to the calling API key. */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example title,author,isbn,published_year
                 *     The Left Hand of Darkness,Ursula K. Le Guin,978-0-441-47812-5,1969
                 *     Emma,Jane Austen,,1815
                 */
                "text/csv": string;
                /**
                 * @example {"title":"The Left Hand of Darkness","author":"Ursula K. Le Guin","isbn":"978-0-441-47812-5","published_year":1969}
                 *     {"title":"Emma","author":"Jane Austen","published_year":1815}
                 */
                "application/x-ndjson": string;
            };
        };
        responses: {
            /** @description The file was received and checked; its rows are being written (or, refused in `mode=all`, will not be). Follow `Location`. */
            202: {
                headers: {
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    RateLimit: components["headers"]["RateLimit"];
                    Location: components["headers"]["Location"];
                    "Idempotent-Replayed": components["headers"]["IdempotentReplayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Import"];
                };
            };
            400: components["responses"]["ImportBadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            406: components["responses"]["NotAcceptable"];
            408: components["responses"]["RequestTimeout"];
            409: components["responses"]["ImportKeyInUse"];
            413: components["responses"]["ImportTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["IdempotencyKeyReused"];
            429: components["responses"]["TooManyRequests"];
            431: components["responses"]["RequestHeaderFieldsTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    getImport: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The import's id, as its `Location` gave it.
                 * @example 0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b61
                 */
                import_id: components["parameters"]["ImportId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /**
             * @description The import. As a stream: frames `event: import` and `data: <Import JSON>`, for example:
             *
             *     ```
             *     event: import
             *     data: {"import_id":"0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b61","collection":"books","mode":"all","format":"csv","state":"running",…}
             *     ```
             */
            200: {
                headers: {
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Import"];
                    "text/event-stream": components["schemas"]["Import"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            406: components["responses"]["NotAcceptable"];
            408: components["responses"]["RequestTimeout"];
            429: components["responses"]["TooManyRequests"];
            431: components["responses"]["RequestHeaderFieldsTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    cancelImport: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The import's id, as its `Location` gave it.
                 * @example 0190a5d2-7c1e-7b4a-9f3e-2d5c8e1a4b61
                 */
                import_id: components["parameters"]["ImportId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The import, with `cancel_requested` true. */
            202: {
                headers: {
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Import"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            406: components["responses"]["NotAcceptable"];
            408: components["responses"]["RequestTimeout"];
            409: components["responses"]["ImportEnded"];
            429: components["responses"]["TooManyRequests"];
            431: components["responses"]["RequestHeaderFieldsTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    listWebhookEndpoints: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The endpoints. */
            200: {
                headers: {
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookEndpointList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            406: components["responses"]["NotAcceptable"];
            408: components["responses"]["RequestTimeout"];
            429: components["responses"]["TooManyRequests"];
            431: components["responses"]["RequestHeaderFieldsTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    createWebhookEndpoint: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WebhookEndpointInput"];
            };
        };
        responses: {
            /** @description The endpoint, with its signing secret. */
            201: {
                headers: {
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    RateLimit: components["headers"]["RateLimit"];
                    Location: components["headers"]["Location"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookSecret"];
                };
            };
            400: components["responses"]["WebhookBadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            406: components["responses"]["NotAcceptable"];
            408: components["responses"]["RequestTimeout"];
            409: components["responses"]["TooManyWebhookEndpoints"];
            413: components["responses"]["ContentTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            431: components["responses"]["RequestHeaderFieldsTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    getWebhookEndpoint: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The endpoint's id, as returned when it was registered.
                 * @example 0190a5d2-9a00-7d3e-8b22-6f7a8b9c0d1e
                 */
                endpoint_id: components["parameters"]["WebhookEndpointId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The endpoint and its state. */
            200: {
                headers: {
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookEndpoint"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            406: components["responses"]["NotAcceptable"];
            408: components["responses"]["RequestTimeout"];
            429: components["responses"]["TooManyRequests"];
            431: components["responses"]["RequestHeaderFieldsTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    deleteWebhookEndpoint: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The endpoint's id, as returned when it was registered.
                 * @example 0190a5d2-9a00-7d3e-8b22-6f7a8b9c0d1e
                 */
                endpoint_id: components["parameters"]["WebhookEndpointId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The endpoint is gone. */
            204: {
                headers: {
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            406: components["responses"]["NotAcceptable"];
            408: components["responses"]["RequestTimeout"];
            429: components["responses"]["TooManyRequests"];
            431: components["responses"]["RequestHeaderFieldsTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    rotateWebhookSecret: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The endpoint's id, as returned when it was registered.
                 * @example 0190a5d2-9a00-7d3e-8b22-6f7a8b9c0d1e
                 */
                endpoint_id: components["parameters"]["WebhookEndpointId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The endpoint with its new secret. */
            200: {
                headers: {
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookSecret"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            406: components["responses"]["NotAcceptable"];
            408: components["responses"]["RequestTimeout"];
            429: components["responses"]["TooManyRequests"];
            431: components["responses"]["RequestHeaderFieldsTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    enableWebhookEndpoint: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The endpoint's id, as returned when it was registered.
                 * @example 0190a5d2-9a00-7d3e-8b22-6f7a8b9c0d1e
                 */
                endpoint_id: components["parameters"]["WebhookEndpointId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The endpoint, enabled. */
            200: {
                headers: {
                    "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookEndpoint"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            406: components["responses"]["NotAcceptable"];
            408: components["responses"]["RequestTimeout"];
            429: components["responses"]["TooManyRequests"];
            431: components["responses"]["RequestHeaderFieldsTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    onBookCreated: {
        parameters: {
            query?: never;
            header: {
                /** @description The delivery's event id, the same on every retry; drop a delivery whose id you processed. */
                "webhook-id": string;
                /** @description Unix seconds when this attempt was sent; refuse one more than 5 minutes away from your clock. */
                "webhook-timestamp": string;
                /** @description Space-separated signatures `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` under the endpoint secret (the part after `whsec_`, base64-decoded); two while a rotated secret overlaps. Accept the delivery when any one verifies (the `standardwebhooks` libraries do this). */
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["BookEvent"];
            };
        };
        responses: {
            /** @description Acknowledged (any 2xx is). A 410 instead disables the endpoint; any other answer, or none within 15 s, is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    onBookReplaced: {
        parameters: {
            query?: never;
            header: {
                /** @description The delivery's event id, the same on every retry; drop a delivery whose id you processed. */
                "webhook-id": string;
                /** @description Unix seconds when this attempt was sent; refuse one more than 5 minutes away from your clock. */
                "webhook-timestamp": string;
                /** @description Space-separated signatures `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` under the endpoint secret (the part after `whsec_`, base64-decoded); two while a rotated secret overlaps. Accept the delivery when any one verifies (the `standardwebhooks` libraries do this). */
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["BookEvent"];
            };
        };
        responses: {
            /** @description Acknowledged (any 2xx is). A 410 instead disables the endpoint; any other answer, or none within 15 s, is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    onBookDeleted: {
        parameters: {
            query?: never;
            header: {
                /** @description The delivery's event id, the same on every retry; drop a delivery whose id you processed. */
                "webhook-id": string;
                /** @description Unix seconds when this attempt was sent; refuse one more than 5 minutes away from your clock. */
                "webhook-timestamp": string;
                /** @description Space-separated signatures `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` under the endpoint secret (the part after `whsec_`, base64-decoded); two while a rotated secret overlaps. Accept the delivery when any one verifies (the `standardwebhooks` libraries do this). */
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["BookEvent"];
            };
        };
        responses: {
            /** @description Acknowledged (any 2xx is). A 410 instead disables the endpoint; any other answer, or none within 15 s, is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    onStudentCreated: {
        parameters: {
            query?: never;
            header: {
                /** @description The delivery's event id, the same on every retry; drop a delivery whose id you processed. */
                "webhook-id": string;
                /** @description Unix seconds when this attempt was sent; refuse one more than 5 minutes away from your clock. */
                "webhook-timestamp": string;
                /** @description Space-separated signatures `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` under the endpoint secret (the part after `whsec_`, base64-decoded); two while a rotated secret overlaps. Accept the delivery when any one verifies (the `standardwebhooks` libraries do this). */
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["StudentEvent"];
            };
        };
        responses: {
            /** @description Acknowledged (any 2xx is). A 410 instead disables the endpoint; any other answer, or none within 15 s, is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    onStudentReplaced: {
        parameters: {
            query?: never;
            header: {
                /** @description The delivery's event id, the same on every retry; drop a delivery whose id you processed. */
                "webhook-id": string;
                /** @description Unix seconds when this attempt was sent; refuse one more than 5 minutes away from your clock. */
                "webhook-timestamp": string;
                /** @description Space-separated signatures `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` under the endpoint secret (the part after `whsec_`, base64-decoded); two while a rotated secret overlaps. Accept the delivery when any one verifies (the `standardwebhooks` libraries do this). */
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["StudentEvent"];
            };
        };
        responses: {
            /** @description Acknowledged (any 2xx is). A 410 instead disables the endpoint; any other answer, or none within 15 s, is retried. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
}
