-- Pencil's second brain: one schema for the embedded store (PGlite) and InsForge.
-- Apply it once to an InsForge project (see the README, "The second brain"); the
-- embedded store applies it itself. Every statement may run again safely.
-- Schema version 1 (kept in brain_meta; Pencil refuses a database from a newer version).

create extension if not exists vector;

create table if not exists brain_meta (
  key text primary key,
  value text not null
);

-- The text full-text search sees: title first, then summary and tags, then the content.
create or replace function brain_fts(title text, summary text, tags text[], content text)
returns tsvector
language sql immutable parallel safe
as $$
  select setweight(to_tsvector('english'::regconfig, coalesce(title, '')), 'A')
      || setweight(to_tsvector('english'::regconfig, coalesce(summary, '') || ' ' || coalesce(array_to_string(tags, ' '), '')), 'B')
      || setweight(to_tsvector('english'::regconfig, left(coalesce(content, ''), 200000)), 'C')
$$;

create table if not exists brain_notes (
  id bigint generated always as identity primary key,
  created_at timestamptz not null default now(),
  kind text not null check (kind in ('text', 'url', 'image')),
  source text,
  content text not null,
  title text not null default '',
  tags text[] not null default '{}',
  summary text not null default '',
  -- the model that wrote title, tags and summary; 'scripted' or null: waiting for `brain reindex`
  enriched_by text,
  -- vectors of different models are never compared: every search filters on this column
  embedding_model text,
  -- 1,536 dimensions; a shorter model's vectors are zero-padded, which leaves cosine similarity unchanged
  embedding vector(1536),
  fts tsvector generated always as (brain_fts(title, summary, tags, content)) stored
);

-- Vectors stay in the row (6 KB at 1,536 dimensions fits a page): no TOAST detour on every
-- distance computed, which makes searches about four times faster.
alter table brain_notes alter column embedding set storage plain;

-- No index on embedding_model: PGlite never gathers planner statistics, and a btree there
-- would lure the planner away from HNSW into sorting every vector of the model.
create index if not exists brain_notes_embedding_idx on brain_notes using hnsw (embedding vector_cosine_ops);
create index if not exists brain_notes_fts_idx on brain_notes using gin (fts);
create index if not exists brain_notes_created_idx on brain_notes (created_at desc, id desc);

-- The nearest notes of one embedding model, by cosine similarity.
create or replace function match_notes(query_embedding vector(1536), embedding_model text, match_count int default 8, min_similarity double precision default 0)
returns table (id bigint, similarity double precision)
language sql stable
as $$
  select near.id, near.similarity
  from (
    select n.id, 1 - (n.embedding <=> query_embedding) as similarity
    from brain_notes n
    where n.embedding_model = match_notes.embedding_model
    order by n.embedding <=> query_embedding
    limit match_count
  ) near
  where near.similarity >= min_similarity
  order by near.similarity desc
$$;

-- Full-text matches of any of the words of a question, best first.
create or replace function search_notes(query_text text, match_count int default 8)
returns table (id bigint, rank double precision)
language sql stable
as $$
  with q as (
    select nullif(replace(plainto_tsquery('english'::regconfig, query_text)::text, ' & ', ' | '), '')::tsquery as query
  )
  select n.id, ts_rank_cd(n.fts, q.query)::double precision as rank
  from brain_notes n, q
  where q.query is not null and n.fts @@ q.query
  order by rank desc, n.id desc
  limit match_count
$$;

-- Notes `brain reindex` must work on: not enriched by a model (when asked), or without a vector of the current model.
create or replace function brain_waiting(current_model text, include_unenriched boolean)
returns table (id bigint)
language sql stable
as $$
  select n.id from brain_notes n
  where (include_unenriched and (n.enriched_by is null or n.enriched_by = 'scripted'))
     or (current_model is not null and n.embedding_model is distinct from current_model)
  order by n.id
$$;

-- Notes per embedding model, and how many of them wait for `brain reindex`.
create or replace function brain_counts(current_model text)
returns table (model text, notes bigint, waiting bigint)
language sql stable
as $$
  select n.embedding_model, count(*),
         count(*) filter (where n.enriched_by is null or n.enriched_by = 'scripted'
                          or (current_model is not null and n.embedding_model is distinct from current_model))
  from brain_notes n
  group by n.embedding_model
$$;

-- On InsForge the anon key acts as the role `anon`: it reaches this table and these
-- functions, nothing else of the brain. (The embedded store has no such role.)
alter table brain_notes enable row level security;
do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    grant select, insert, update, delete on brain_notes to anon;
    grant select on brain_meta to anon;
    grant execute on function match_notes(vector, text, int, double precision) to anon;
    grant execute on function search_notes(text, int) to anon;
    grant execute on function brain_waiting(text, boolean) to anon;
    grant execute on function brain_counts(text) to anon;
    drop policy if exists brain_notes_anon on brain_notes;
    create policy brain_notes_anon on brain_notes for all to anon using (true) with check (true);
  end if;
end
$$;

insert into brain_meta (key, value) values ('schema_version', '1')
on conflict (key) do update set value = excluded.value
where brain_meta.value::int < excluded.value::int;
