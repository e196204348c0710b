// eventkg exploration queries: paste into Neo4j Browser, or run `eventkg saved NAME`
// (`eventkg cypher --saved NAME --param k=v`). Parsed by graphstore/saved_cypher.py.
//
// Each query starts with a header of `// key: value` lines:
//   name         the query's name (lower-case, dashes)
//   description  one line saying what it shows
//   params       NAME=DEFAULT, comma-separated; defaults fit the project's samples (ingest/samples)
//   neo4j-only   REASON (the query has no LadybugDB form)
// The Neo4j Cypher follows; a `// ladybug:` line starts the LadybugDB variant, where the two
// dialects differ (LadybugDB: label(r) not type(r), 1-based lists, variable-length matches
// are walks so repeated nodes are filtered explicitly, no startNode(), no ORDER BY on lists).
// Neo4j variants end with a `graph` column (paths) so that Browser draws them; every other
// column is a plain value, the same on both backends.

// name: causes-and-effects
// description: An event's strongest causes and effects, one and two CAUSES hops out (by weight, a 2-hop path by its weaker edge), with the event between them.
// params: event=learn, limit=50
// limit-per: role, hops
// The second hop starts from the $limit strongest first hops only, so a hub stays cheap.
MATCH p = (c:Event)-[r:CAUSES]->(e:Event {text: $event})
WHERE c <> e
WITH c, p, coalesce(r.weight, 0.0) AS weight
RETURN 'cause' AS role, 1 AS hops, c.text AS event, [] AS via, weight, [p] AS graph
ORDER BY weight DESC, event LIMIT toInteger($limit)
UNION ALL
MATCH p1 = (c1:Event)-[r1:CAUSES]->(e:Event {text: $event})
WHERE c1 <> e
WITH e, c1, p1, coalesce(r1.weight, 0.0) AS w1
ORDER BY w1 DESC, c1.text LIMIT toInteger($limit)
MATCH p2 = (c:Event)-[r2:CAUSES]->(c1)
WHERE c <> e AND c <> c1
WITH c, c1, p1, p2, w1, coalesce(r2.weight, 0.0) AS w2
RETURN 'cause' AS role, 2 AS hops, c.text AS event, [c1.text] AS via, CASE WHEN w2 < w1 THEN w2 ELSE w1 END AS weight,
       [p2, p1] AS graph
ORDER BY weight DESC, event, c1.text LIMIT toInteger($limit)
UNION ALL
MATCH p = (e:Event {text: $event})-[r:CAUSES]->(x:Event)
WHERE x <> e
WITH x, p, coalesce(r.weight, 0.0) AS weight
RETURN 'effect' AS role, 1 AS hops, x.text AS event, [] AS via, weight, [p] AS graph
ORDER BY weight DESC, event LIMIT toInteger($limit)
UNION ALL
MATCH p1 = (e:Event {text: $event})-[r1:CAUSES]->(x1:Event)
WHERE x1 <> e
WITH e, x1, p1, coalesce(r1.weight, 0.0) AS w1
ORDER BY w1 DESC, x1.text LIMIT toInteger($limit)
MATCH p2 = (x1)-[r2:CAUSES]->(x:Event)
WHERE x <> e AND x <> x1
WITH x, x1, p1, p2, w1, coalesce(r2.weight, 0.0) AS w2
RETURN 'effect' AS role, 2 AS hops, x.text AS event, [x1.text] AS via, CASE WHEN w2 < w1 THEN w2 ELSE w1 END AS weight,
       [p1, p2] AS graph
ORDER BY weight DESC, event, x1.text LIMIT toInteger($limit)
// ladybug:
// (OPTIONAL MATCH for the second hop: a plain MATCH after the LIMIT is planned as a hash join over every CAUSES edge)
MATCH (c:Event)-[r:CAUSES]->(e:Event {id: $event_id})
WHERE c.id <> e.id
WITH c, coalesce(r.weight, 0.0) AS weight
RETURN 'cause' AS role, 1 AS hops, c.text AS event, CAST([] AS STRING[]) AS via, weight
ORDER BY weight DESC, event LIMIT $limit
UNION ALL
MATCH (c1:Event)-[r1:CAUSES]->(e:Event {id: $event_id})
WHERE c1.id <> e.id
WITH e, c1, coalesce(r1.weight, 0.0) AS w1
ORDER BY w1 DESC, c1.text LIMIT $limit
OPTIONAL MATCH (c:Event)-[r2:CAUSES]->(c1)
WITH e, c1, c, w1, coalesce(r2.weight, 0.0) AS w2
WHERE c IS NOT NULL AND c.id <> e.id AND c.id <> c1.id
RETURN 'cause' AS role, 2 AS hops, c.text AS event, [c1.text] AS via, CASE WHEN w2 < w1 THEN w2 ELSE w1 END AS weight
ORDER BY weight DESC, event, c1.text LIMIT $limit
UNION ALL
MATCH (e:Event {id: $event_id})-[r:CAUSES]->(x:Event)
WHERE x.id <> e.id
WITH x, coalesce(r.weight, 0.0) AS weight
RETURN 'effect' AS role, 1 AS hops, x.text AS event, CAST([] AS STRING[]) AS via, weight
ORDER BY weight DESC, event LIMIT $limit
UNION ALL
MATCH (e:Event {id: $event_id})-[r1:CAUSES]->(x1:Event)
WHERE x1.id <> e.id
WITH e, x1, coalesce(r1.weight, 0.0) AS w1
ORDER BY w1 DESC, x1.text LIMIT $limit
OPTIONAL MATCH (x1)-[r2:CAUSES]->(x:Event)
WITH e, x1, x, w1, coalesce(r2.weight, 0.0) AS w2
WHERE x IS NOT NULL AND x.id <> e.id AND x.id <> x1.id
RETURN 'effect' AS role, 2 AS hops, x.text AS event, [x1.text] AS via, CASE WHEN w2 < w1 THEN w2 ELSE w1 END AS weight
ORDER BY weight DESC, event, x1.text LIMIT $limit

// name: ev2-question-schema
// description: The schema graph of an EV² instance-level question: its instance events, their types, and the event relations among those types.
// params: qid=1-2, task=CEC, limit=100
// One question's few events and types: bounded by construction, the limit is applied to the rows it returns.
MATCH p = (q:Question {qid: $qid, task: $task, level: 'instance'})-[:ASKS|HAS_CHOICE|HAS_CONTEXT]->(i:Event)-[:HAS_TYPE]->(t:Event)
RETURN i.text AS head, 'HAS_TYPE' AS relation, t.text AS tail, collect(p) AS graph
UNION
MATCH (q:Question {qid: $qid, task: $task, level: 'instance'})-[:ASKS|HAS_CHOICE|HAS_CONTEXT]->(:Event)-[:HAS_TYPE]->(t:Event)
WITH collect(DISTINCT t.id) AS types
UNWIND types AS tid
MATCH p = (a:Event {id: tid})-[r:CAUSES|BEFORE|HAS_SUBEVENT]->(b:Event)
WHERE b.id IN types
RETURN a.text AS head, type(r) AS relation, b.text AS tail, collect(p) AS graph
// ladybug:
// (OPTIONAL MATCH from the question: a MATCH over the whole chain is planned as a scan of every Event and edge)
MATCH (q:Question {qid: $qid, task: $task, level: 'instance'})
OPTIONAL MATCH (q)-[:ASKS|HAS_CHOICE|HAS_CONTEXT]->(i:Event)-[:HAS_TYPE]->(t:Event)
WITH q, i, t WHERE t IS NOT NULL
RETURN DISTINCT i.text AS head, 'HAS_TYPE' AS relation, t.text AS tail
UNION
MATCH (q:Question {qid: $qid, task: $task, level: 'instance'})
OPTIONAL MATCH (q)-[:ASKS|HAS_CHOICE|HAS_CONTEXT]->(:Event)-[:HAS_TYPE]->(t:Event)
WITH q, collect(DISTINCT t.id) AS types
OPTIONAL MATCH (q)-[:ASKS|HAS_CHOICE|HAS_CONTEXT]->(:Event)-[:HAS_TYPE]->(a:Event)-[r:CAUSES|BEFORE|HAS_SUBEVENT]->(b:Event)
WITH types, a, r, b WHERE b.id IN types
RETURN DISTINCT a.text AS head, label(r) AS relation, b.text AS tail

// name: abstractions
// description: The AbsPyramid abstractions of an event, by relation (noun/verb/event entailment), valid ones first, with their Concept.
// params: event=PersonX study for exam, limit=50
// limit-per: relation
MATCH p = (e:Event {text: $event})-[r:NOUN_ENTAIL|VERB_ENTAIL|EVENT_ENTAIL]->(t:Event)
OPTIONAL MATCH q = (e)-[:ABSTRACTS_TO {relation: type(r)}]->(:Concept {name: r.concept})
RETURN type(r) AS relation, r.instance AS instance, r.concept AS concept, r.label = 1 AS valid, t.text AS abstraction,
       [x IN [p, q] WHERE x IS NOT NULL] AS graph
ORDER BY relation, valid DESC, concept, abstraction
// ladybug:
// (OPTIONAL MATCH: the one-pattern MATCH is planned as a scan of every Event for t.text: 83 ms at ASER 1M/3M, 1.7 ms so)
MATCH (e:Event {id: $event_id})
OPTIONAL MATCH (e)-[r:NOUN_ENTAIL|VERB_ENTAIL|EVENT_ENTAIL]->(t:Event)
WITH r, t WHERE t IS NOT NULL
RETURN label(r) AS relation, r.instance AS instance, r.concept AS concept, r.label = 1 AS valid, t.text AS abstraction
ORDER BY relation, valid DESC, concept, abstraction

// name: aser-neighbourhood
// description: The ASER discourse neighbourhood of an eventuality (both directions), strongest relations first by count.
// params: event=i study for exam, limit=50
MATCH p = (e:Event {text: $event})-[r:PRECEDENCE|SUCCESSION|SYNCHRONOUS|REASON|RESULT|CONDITION|CONTRAST|CONCESSION|CONJUNCTION|INSTANTIATION|RESTATEMENT|CHOSEN_ALTERNATIVE|ALTERNATIVE|EXCEPTION|CO_OCCURRENCE]-(x:Event)
RETURN type(r) AS relation, CASE WHEN startNode(r) = e THEN 'out' ELSE 'in' END AS direction, x.text AS neighbour,
       coalesce(r.count, 0.0) AS count, p AS graph
ORDER BY count DESC, relation, direction, neighbour LIMIT toInteger($limit)
// ladybug:
MATCH (e:Event {id: $event_id})-[r:PRECEDENCE|SUCCESSION|SYNCHRONOUS|REASON|RESULT|CONDITION|CONTRAST|CONCESSION|CONJUNCTION|INSTANTIATION|RESTATEMENT|CHOSEN_ALTERNATIVE|ALTERNATIVE|EXCEPTION|CO_OCCURRENCE]-(x:Event)
RETURN label(r) AS relation, CASE WHEN struct_extract(r, '_src') = id(e) THEN 'out' ELSE 'in' END AS direction,
       x.text AS neighbour, coalesce(r.count, 0.0) AS count
ORDER BY count DESC, relation, direction, neighbour LIMIT $limit

// name: clomo-argument
// description: A CLoMo item: the argument with Premise1, its counterfactual Argument' with Premise2, and the logical relation asked.
// params: item=train_9001, limit=50
// One item: bounded by construction, the limit is applied to the rows it returns.
MATCH pa = (p1:Premise)-[r1:NECESSARY_ASSUMPTION|SUFFICIENT_ASSUMPTION|STRENGTHENS|WEAKENS]->(a:Argument {id_string: $item, state: 1})
MATCH pc = (p2:Premise)-[r2:NECESSARY_ASSUMPTION|SUFFICIENT_ASSUMPTION|STRENGTHENS|WEAKENS]->(cf:Argument)-[:COUNTERFACTUAL_OF]->(a)
RETURN a.id_string AS item, a.split AS split, type(r1) AS relation, a.text AS argument, p1.text AS premise1,
       cf.text AS counterfactual, p2.text AS premise2, [pa, pc] AS graph
ORDER BY split
// ladybug:
MATCH (p1:Premise)-[r1:NECESSARY_ASSUMPTION|SUFFICIENT_ASSUMPTION|STRENGTHENS|WEAKENS]->(a:Argument {id_string: $item, state: 1})
MATCH (p2:Premise)-[r2:NECESSARY_ASSUMPTION|SUFFICIENT_ASSUMPTION|STRENGTHENS|WEAKENS]->(cf:Argument)-[:COUNTERFACTUAL_OF]->(a)
RETURN a.id_string AS item, a.split AS split, label(r1) AS relation, a.text AS argument, p1.text AS premise1,
       cf.text AS counterfactual, p2.text AS premise2
ORDER BY split

// name: paths-between
// description: Event-relation paths (up to 4 steps, either direction) between two events through their strongest edges, shortest first, with the relation Table 1 of EV² induces for each path.
// params: head=cram, tail=fail exam, limit=50
// Each end walks its $limit strongest edges and, from those, the $limit strongest next edges
// (a beam: a path through weaker edges of a busy event is not found; raise $limit to widen it);
// a path is a walk from the head that meets a walk to the tail. Table 1 is encoded below as
// regular expressions over the step names, tried in table order (queries/induction/induce.py is the
// reference and the tests compare the two); one step induces itself; `induced` is null when
// no rule matches.
// from the head: its $limit strongest edges, and the $limit strongest next edges from those
MATCH (a:Event {text: $head})-[r:CAUSES|BEFORE|HAS_SUBEVENT]-(x:Event)
WITH a, x, r, coalesce(r.weight, 0.0) AS w,
     CASE type(r)
       WHEN 'CAUSES' THEN CASE WHEN startNode(r) = a THEN 'Causes' ELSE 'IsResult' END
       WHEN 'BEFORE' THEN CASE WHEN startNode(r) = a THEN 'Before' ELSE 'After' END
       ELSE CASE WHEN startNode(r) = a THEN 'HasSubevent' ELSE 'IsSubevent' END
     END AS s
ORDER BY w DESC, x.text, x.id, s LIMIT toInteger($limit)
WITH a, collect({ns: [a, x], rs: [r], steps: [s]}) AS left1
WITH left1
MATCH (a:Event {text: $head})-[r:CAUSES|BEFORE|HAS_SUBEVENT]-(x:Event)
WITH left1, a, x, r, coalesce(r.weight, 0.0) AS w,
     CASE type(r)
       WHEN 'CAUSES' THEN CASE WHEN startNode(r) = a THEN 'Causes' ELSE 'IsResult' END
       WHEN 'BEFORE' THEN CASE WHEN startNode(r) = a THEN 'Before' ELSE 'After' END
       ELSE CASE WHEN startNode(r) = a THEN 'HasSubevent' ELSE 'IsSubevent' END
     END AS s
ORDER BY w DESC, x.text, x.id, s LIMIT toInteger($limit)
OPTIONAL MATCH (x)-[r2:CAUSES|BEFORE|HAS_SUBEVENT]-(y:Event)
WITH left1, a, x, r, s, y, r2, coalesce(r2.weight, 0.0) AS w2, y IS NULL OR y = a AS back,
     CASE type(r2)
       WHEN 'CAUSES' THEN CASE WHEN startNode(r2) = x THEN 'Causes' ELSE 'IsResult' END
       WHEN 'BEFORE' THEN CASE WHEN startNode(r2) = x THEN 'Before' ELSE 'After' END
       ELSE CASE WHEN startNode(r2) = x THEN 'HasSubevent' ELSE 'IsSubevent' END
     END AS s2
ORDER BY back, w2 DESC, y.text, y.id, x.text, x.id, s, s2 LIMIT toInteger($limit)
WITH left1, a, collect(CASE WHEN back THEN NULL ELSE {ns: [a, x, y], rs: [r, r2], steps: [s, s2]} END) AS left2
// the same from the tail, each path walked towards it
WITH left1, left2
MATCH (b:Event {text: $tail})-[r:CAUSES|BEFORE|HAS_SUBEVENT]-(x:Event)
WITH left1, left2, b, x, r, coalesce(r.weight, 0.0) AS w,
     CASE type(r)
       WHEN 'CAUSES' THEN CASE WHEN startNode(r) = x THEN 'Causes' ELSE 'IsResult' END
       WHEN 'BEFORE' THEN CASE WHEN startNode(r) = x THEN 'Before' ELSE 'After' END
       ELSE CASE WHEN startNode(r) = x THEN 'HasSubevent' ELSE 'IsSubevent' END
     END AS s
ORDER BY w DESC, x.text, x.id, s LIMIT toInteger($limit)
WITH left1, left2, b, collect({ns: [x, b], rs: [r], steps: [s]}) AS right1
WITH left1, left2, right1
MATCH (b:Event {text: $tail})-[r:CAUSES|BEFORE|HAS_SUBEVENT]-(x:Event)
WITH left1, left2, right1, b, x, r, coalesce(r.weight, 0.0) AS w,
     CASE type(r)
       WHEN 'CAUSES' THEN CASE WHEN startNode(r) = x THEN 'Causes' ELSE 'IsResult' END
       WHEN 'BEFORE' THEN CASE WHEN startNode(r) = x THEN 'Before' ELSE 'After' END
       ELSE CASE WHEN startNode(r) = x THEN 'HasSubevent' ELSE 'IsSubevent' END
     END AS s
ORDER BY w DESC, x.text, x.id, s LIMIT toInteger($limit)
OPTIONAL MATCH (x)-[r2:CAUSES|BEFORE|HAS_SUBEVENT]-(y:Event)
WITH left1, left2, right1, b, x, r, s, y, r2, coalesce(r2.weight, 0.0) AS w2, y IS NULL OR y = b AS back,
     CASE type(r2)
       WHEN 'CAUSES' THEN CASE WHEN startNode(r2) = y THEN 'Causes' ELSE 'IsResult' END
       WHEN 'BEFORE' THEN CASE WHEN startNode(r2) = y THEN 'Before' ELSE 'After' END
       ELSE CASE WHEN startNode(r2) = y THEN 'HasSubevent' ELSE 'IsSubevent' END
     END AS s2
ORDER BY back, w2 DESC, y.text, y.id, x.text, x.id, s, s2 LIMIT toInteger($limit)
WITH left1, left2, right1, b, collect(CASE WHEN back THEN NULL ELSE {ns: [y, x, b], rs: [r2, r], steps: [s2, s]} END) AS right2
// a path is a walk from the head joined to a walk to the tail where they meet (1+0, 1+1, 2+1 or 2+2 steps)
WITH left1 + left2 AS lefts, [{ns: [b], rs: [], steps: []}] + right1 + right2 AS rights
UNWIND lefts AS l
UNWIND rights AS r
WITH l, r
WHERE l.ns[-1] = r.ns[0] AND (size(l.steps) = 1 AND size(r.steps) <= 1 OR size(l.steps) = 2 AND size(r.steps) >= 1)
WITH l.ns + r.ns[1..] AS ns, l.rs + r.rs AS rs, l.steps + r.steps AS relations
WHERE all(i IN range(0, size(ns) - 2) WHERE NOT ns[i] IN ns[i + 1..])
WITH ns, rs, relations, reduce(s = '', x IN relations | s + x + ',') AS seq
RETURN size(relations) AS hops, [n IN ns | n.text] AS events, relations,
       CASE
         WHEN size(relations) = 1 THEN relations[0]
         WHEN seq =~ '(Before,)+' THEN 'Before'
         WHEN seq =~ '(After,)+' THEN 'After'
         WHEN seq =~ '(Before,)*(Causes,)+(Before,)*' THEN 'Before'
         WHEN seq =~ '(After,)*(IsResult,)+(After,)*' THEN 'After'
         WHEN seq =~ '(Before,)*(HasSubevent,)+(Before,)*' THEN 'Before'
         WHEN seq =~ '(Causes,)*(HasSubevent,)+(Causes,)*' THEN 'Causes'
         WHEN seq =~ '(After,)*(IsSubevent,)+(After,)*' THEN 'After'
         WHEN seq =~ '(IsResult,)*(IsSubevent,)+(IsResult,)*' THEN 'IsResult'
       END AS induced,
       ns + rs AS graph
ORDER BY hops, events, relations LIMIT toInteger($limit)
// ladybug:
// (grouped collects: LadybugDB 0.22 drops the ORDER BY before a LIMIT that feeds an ungrouped aggregate)
// from the head: its $limit strongest edges, and the $limit strongest next edges from those
MATCH (a:Event {id: $head_id})-[r:CAUSES|BEFORE|HAS_SUBEVENT]-(x:Event)
WITH a, x, coalesce(r.weight, 0.0) AS w,
     CASE label(r)
       WHEN 'CAUSES' THEN CASE WHEN struct_extract(r, '_src') = id(a) THEN 'Causes' ELSE 'IsResult' END
       WHEN 'BEFORE' THEN CASE WHEN struct_extract(r, '_src') = id(a) THEN 'Before' ELSE 'After' END
       ELSE CASE WHEN struct_extract(r, '_src') = id(a) THEN 'HasSubevent' ELSE 'IsSubevent' END
     END AS s
ORDER BY w DESC, x.text, x.id, s LIMIT $limit
WITH a, collect(CASE WHEN x IS NULL THEN NULL ELSE {ids: [a.id, x.id], texts: [a.text, x.text], steps: [s]} END) AS left1
WITH left1
MATCH (a:Event {id: $head_id})
UNWIND left1 AS p
WITH left1, a, p.ids[2] AS xid, p.steps[1] AS s
MATCH (x:Event {id: xid})
OPTIONAL MATCH (x)-[r2:CAUSES|BEFORE|HAS_SUBEVENT]-(y:Event)
WITH left1, a, x, s, y, coalesce(r2.weight, 0.0) AS w2, y IS NULL OR y.id = a.id AS back,
     CASE label(r2)
       WHEN 'CAUSES' THEN CASE WHEN struct_extract(r2, '_src') = id(x) THEN 'Causes' ELSE 'IsResult' END
       WHEN 'BEFORE' THEN CASE WHEN struct_extract(r2, '_src') = id(x) THEN 'Before' ELSE 'After' END
       ELSE CASE WHEN struct_extract(r2, '_src') = id(x) THEN 'HasSubevent' ELSE 'IsSubevent' END
     END AS s2
ORDER BY back, w2 DESC, y.text, y.id, x.text, x.id, s, s2 LIMIT $limit
WITH left1, a, collect(CASE WHEN back THEN NULL ELSE {ids: [a.id, x.id, y.id], texts: [a.text, x.text, y.text], steps: [s, s2]} END) AS left2
// the same from the tail, each path walked towards it
WITH left1, left2
MATCH (b:Event {id: $tail_id})-[r:CAUSES|BEFORE|HAS_SUBEVENT]-(x:Event)
WITH left1, left2, b, x, coalesce(r.weight, 0.0) AS w,
     CASE label(r)
       WHEN 'CAUSES' THEN CASE WHEN struct_extract(r, '_src') = id(x) THEN 'Causes' ELSE 'IsResult' END
       WHEN 'BEFORE' THEN CASE WHEN struct_extract(r, '_src') = id(x) THEN 'Before' ELSE 'After' END
       ELSE CASE WHEN struct_extract(r, '_src') = id(x) THEN 'HasSubevent' ELSE 'IsSubevent' END
     END AS s
ORDER BY w DESC, x.text, x.id, s LIMIT $limit
WITH left1, left2, b, collect(CASE WHEN x IS NULL THEN NULL ELSE {ids: [x.id, b.id], texts: [x.text, b.text], steps: [s]} END) AS right1
WITH left1, left2, right1
MATCH (b:Event {id: $tail_id})
UNWIND right1 AS p
WITH left1, left2, right1, b, p.ids[1] AS xid, p.steps[1] AS s
MATCH (x:Event {id: xid})
OPTIONAL MATCH (x)-[r2:CAUSES|BEFORE|HAS_SUBEVENT]-(y:Event)
WITH left1, left2, right1, b, x, s, y, coalesce(r2.weight, 0.0) AS w2, y IS NULL OR y.id = b.id AS back,
     CASE label(r2)
       WHEN 'CAUSES' THEN CASE WHEN struct_extract(r2, '_src') = id(y) THEN 'Causes' ELSE 'IsResult' END
       WHEN 'BEFORE' THEN CASE WHEN struct_extract(r2, '_src') = id(y) THEN 'Before' ELSE 'After' END
       ELSE CASE WHEN struct_extract(r2, '_src') = id(y) THEN 'HasSubevent' ELSE 'IsSubevent' END
     END AS s2
ORDER BY back, w2 DESC, y.text, y.id, x.text, x.id, s, s2 LIMIT $limit
WITH left1, left2, right1, b, collect(CASE WHEN back THEN NULL ELSE {ids: [y.id, x.id, b.id], texts: [y.text, x.text, b.text], steps: [s2, s]} END) AS right2
// a path is a walk from the head joined to a walk to the tail where they meet (1+0, 1+1, 2+1 or 2+2 steps)
WITH left1 + left2 AS lefts, [{ids: [b.id], texts: [b.text], steps: CAST([] AS STRING[])}] + right1 + right2 AS rights
UNWIND lefts AS l
UNWIND rights AS r
WITH l, r
WHERE l.ids[size(l.ids)] = r.ids[1] AND (size(l.steps) = 1 AND size(r.steps) <= 1 OR size(l.steps) = 2 AND size(r.steps) >= 1)
WITH l.ids + list_slice(r.ids, 2, size(r.ids)) AS ids, l.texts + list_slice(r.texts, 2, size(r.texts)) AS events,
     l.steps + r.steps AS relations
WHERE size(list_distinct(ids)) = size(ids)
WITH size(relations) AS hops, events, relations, list_to_string(',', relations) + ',' AS seq
RETURN hops, events, relations,
       CASE
         WHEN hops = 1 THEN relations[1]
         WHEN regexp_full_match(seq, '(Before,)+') THEN 'Before'
         WHEN regexp_full_match(seq, '(After,)+') THEN 'After'
         WHEN regexp_full_match(seq, '(Before,)*(Causes,)+(Before,)*') THEN 'Before'
         WHEN regexp_full_match(seq, '(After,)*(IsResult,)+(After,)*') THEN 'After'
         WHEN regexp_full_match(seq, '(Before,)*(HasSubevent,)+(Before,)*') THEN 'Before'
         WHEN regexp_full_match(seq, '(Causes,)*(HasSubevent,)+(Causes,)*') THEN 'Causes'
         WHEN regexp_full_match(seq, '(After,)*(IsSubevent,)+(After,)*') THEN 'After'
         WHEN regexp_full_match(seq, '(IsResult,)*(IsSubevent,)+(IsResult,)*') THEN 'IsResult'
       END AS induced
ORDER BY hops, list_to_string('|', events), list_to_string(',', relations) LIMIT $limit

// name: data-model
// description: The stored data model as Browser draws it: every label with the relationship types joining them, and their indexes.
// params: limit=50
// neo4j-only: db.schema.visualization() is a Neo4j procedure; on LadybugDB, `eventkg stats` lists labels and types
CALL db.schema.visualization() YIELD nodes, relationships
// eventkg's own bookkeeping (labels EventKGIngest, EventKGOrigin) is not part of the data model
WITH [n IN nodes WHERE NOT labels(n)[0] STARTS WITH 'EventKG'] AS nodes, relationships
RETURN [n IN nodes | labels(n)[0]] AS labels, size(relationships) AS relationship_types, nodes + relationships AS graph
