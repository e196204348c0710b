// eventkg exploration queries: paste into Neo4j Browser, or run `eventkg saved NAME`
// (`eventkg cypher --saved NAME --param k=v`). Parsed by graphstore/saved_queries.py.
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
ORDER BY weight DESC, event LIMIT $limit
UNION ALL
MATCH p1 = (c1:Event)-[r1:CAUSES]->(e:Event {text: $event})
WHERE c1 <> e
WITH e, c1, p1, coalesce(r1.weight, 0.0) AS w1
ORDER BY w1 DESC, c1.text LIMIT $limit
MATCH p2 = (c:Event)-[r2:CAUSES]->(c1)
WHERE c <> e AND c <> c1
WITH c, c1, p1, p2, w1, coalesce(r2.weight, 0.0) AS w2
RETURN 'cause' AS role, 2 AS hops, c.text AS event, [c1.text] AS via, CASE WHEN w2 < w1 THEN w2 ELSE w1 END AS weight,
       [p2, p1] AS graph
ORDER BY weight DESC, event, c1.text LIMIT $limit
UNION ALL
MATCH p = (e:Event {text: $event})-[r:CAUSES]->(x:Event)
WHERE x <> e
WITH x, p, coalesce(r.weight, 0.0) AS weight
RETURN 'effect' AS role, 1 AS hops, x.text AS event, [] AS via, weight, [p] AS graph
ORDER BY weight DESC, event LIMIT $limit
UNION ALL
MATCH p1 = (e:Event {text: $event})-[r1:CAUSES]->(x1:Event)
WHERE x1 <> e
WITH e, x1, p1, coalesce(r1.weight, 0.0) AS w1
ORDER BY w1 DESC, x1.text LIMIT $limit
MATCH p2 = (x1)-[r2:CAUSES]->(x:Event)
WHERE x <> e AND x <> x1
WITH x, x1, p1, p2, w1, coalesce(r2.weight, 0.0) AS w2
RETURN 'effect' AS role, 2 AS hops, x.text AS event, [x1.text] AS via, CASE WHEN w2 < w1 THEN w2 ELSE w1 END AS weight,
       [p1, p2] AS graph
ORDER BY weight DESC, event, x1.text LIMIT $limit
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
MATCH (q:Question {qid: $qid, task: $task, level: 'instance'})-[:ASKS|HAS_CHOICE|HAS_CONTEXT]->(i:Event)-[:HAS_TYPE]->(t:Event)
RETURN DISTINCT i.text AS head, 'HAS_TYPE' AS relation, t.text AS tail
UNION
MATCH (q:Question {qid: $qid, task: $task, level: 'instance'})-[:ASKS|HAS_CHOICE|HAS_CONTEXT]->(:Event)-[:HAS_TYPE]->(t:Event)
WITH collect(DISTINCT t.id) AS types
UNWIND types AS tid
MATCH (a:Event {id: tid})-[r:CAUSES|BEFORE|HAS_SUBEVENT]->(b:Event)
WHERE b.id IN types
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
MATCH (e:Event {id: $event_id})-[r:NOUN_ENTAIL|VERB_ENTAIL|EVENT_ENTAIL]->(t:Event)
RETURN label(r) AS relation, r.instance AS instance, r.concept AS concept, r.label = 1 AS valid, t.text AS abstraction
ORDER BY relation, valid DESC, concept, abstraction

// name: aser-neighbourhood
// description: The ASER discourse neighbourhood of an eventuality (both directions), strongest relations first by count.
// params: event=i study for exam, limit=50
MATCH p = (e:Event {text: $event})-[r:PRECEDENCE|SUCCESSION|SYNCHRONOUS|REASON|RESULT|CONDITION|CONTRAST|CONCESSION|CONJUNCTION|INSTANTIATION|RESTATEMENT|CHOSEN_ALTERNATIVE|ALTERNATIVE|EXCEPTION|CO_OCCURRENCE]-(x:Event)
RETURN type(r) AS relation, CASE WHEN startNode(r) = e THEN 'out' ELSE 'in' END AS direction, x.text AS neighbour,
       coalesce(r.count, 0.0) AS count, p AS graph
ORDER BY count DESC, relation, direction, neighbour LIMIT $limit
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
// description: Event-relation paths (up to 4 steps, either direction) between two events, shortest first, with the relation Table 1 of EV² induces for each path.
// params: head=cram, tail=fail exam, limit=50
// Table 1 is encoded below as regular expressions over the step names, tried in table
// order (queries/induce.py is the reference and the tests compare the two); one step
// induces itself; `induced` is null when no rule matches.
MATCH p = (a:Event {text: $head})-[:CAUSES|BEFORE|HAS_SUBEVENT*1..4]-(b:Event {text: $tail})
WHERE all(n IN nodes(p) WHERE single(m IN nodes(p) WHERE m = n))
WITH p, [i IN range(0, length(p) - 1) |
          CASE type(relationships(p)[i])
            WHEN 'CAUSES' THEN CASE WHEN startNode(relationships(p)[i]) = nodes(p)[i] THEN 'Causes' ELSE 'IsResult' END
            WHEN 'BEFORE' THEN CASE WHEN startNode(relationships(p)[i]) = nodes(p)[i] THEN 'Before' ELSE 'After' END
            ELSE CASE WHEN startNode(relationships(p)[i]) = nodes(p)[i] THEN 'HasSubevent' ELSE 'IsSubevent' END
          END] AS relations
WITH p, relations, reduce(s = '', x IN relations | s + x + ',') AS seq
RETURN length(p) AS hops, [n IN nodes(p) | n.text] AS events, relations,
       CASE
         WHEN length(p) = 1 THEN relations[0]
         WHEN seq =~ '(Before,)+' THEN 'Before'
         WHEN seq =~ '(After,)+' THEN 'After'
         WHEN seq =~ '(Before,)*(Causes,)+(Before,)*' THEN 'Before'
         WHEN seq =~ '(After,)*(IsResult,)+(After,)*' THEN 'After'
         WHEN seq =~ '(Before,)*(HasSubevent,)+(Before,)*' THEN 'Before'
         WHEN seq =~ '(Causes,)*(HasSubevent,)+(Causes,)*' THEN 'Causes'
         WHEN seq =~ '(After,)*(IsSubevent,)+(After,)*' THEN 'After'
         WHEN seq =~ '(IsResult,)*(IsSubevent,)+(IsResult,)*' THEN 'IsResult'
       END AS induced,
       p AS graph
ORDER BY hops, events, relations LIMIT $limit
// ladybug:
MATCH p = (a:Event {id: $head_id})-[:CAUSES|BEFORE|HAS_SUBEVENT*1..4]-(b:Event {id: $tail_id})
WITH length(p) AS hops, nodes(p) AS ns, rels(p) AS rs
WHERE size(list_distinct(properties(ns, 'id'))) = size(ns)
WITH hops, ns, list_transform(range(1, size(rs)), i ->
          CASE label(rs[i])
            WHEN 'CAUSES' THEN CASE WHEN struct_extract(rs[i], '_src') = struct_extract(ns[i], '_id') THEN 'Causes' ELSE 'IsResult' END
            WHEN 'BEFORE' THEN CASE WHEN struct_extract(rs[i], '_src') = struct_extract(ns[i], '_id') THEN 'Before' ELSE 'After' END
            ELSE CASE WHEN struct_extract(rs[i], '_src') = struct_extract(ns[i], '_id') THEN 'HasSubevent' ELSE 'IsSubevent' END
          END) AS relations
WITH hops, ns, relations, list_to_string(',', relations) + ',' AS seq
RETURN hops, properties(ns, 'text') AS events, relations,
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
RETURN [n IN nodes | labels(n)[0]] AS labels, size(relationships) AS relationship_types, nodes + relationships AS graph
