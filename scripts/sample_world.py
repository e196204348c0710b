"""The small world the project's sample files describe: studying and exams, court cases,
cooking, travel. Hand-written facts only; ``scripts/make_samples.py`` turns them into ``ingest/samples``.

Schema edges are ``"head REL tail"`` lines with REL one of C (Causes), B (Before),
S (HasSubevent), always in the stored (forward) direction.
"""

from __future__ import annotations

SCENARIOS: dict[str, dict] = {
    "studying": {
        "who": "Maya",
        "setting": "during the last week of the semester",
        "edges": """
enroll_in_course B attend_lecture
attend_lecture S take_notes
attend_lecture B review_notes
take_notes B review_notes
take_notes C remember_information
review_notes C remember_information
study_for_exam S review_notes
study_for_exam S read_textbook
study_for_exam S solve_practice_problems
study_for_exam S memorize_formulas
study_for_exam C remember_information
study_for_exam B take_exam
study_for_exam C pass_exam
read_textbook B solve_practice_problems
read_textbook C learn
learn C remember_information
learn B take_exam
solve_practice_problems C get_good_grade
join_study_group S ask_teacher
join_study_group C learn
join_study_group B take_exam
ask_teacher C learn
procrastinate C cram
procrastinate C feel_stress
procrastinate B cram
cram S memorize_formulas
cram S stay_up_late
cram B take_exam
stay_up_late C feel_tired
feel_stress C stay_up_late
feel_tired C fail_exam
take_exam S answer_questions
take_exam S check_answers
answer_questions B check_answers
take_exam B pass_exam
take_exam B fail_exam
remember_information C pass_exam
pass_exam C get_good_grade
pass_exam C celebrate
pass_exam B graduate
get_good_grade C celebrate
fail_exam B retake_exam
fail_exam C feel_disappointed
feel_disappointed B retake_exam
graduate C celebrate
retake_exam B graduate
""",
    },
    "court": {
        "who": "Daniel",
        "setting": "as the fraud case against him moved through the courts",
        "edges": """
commit_perjury S tell_lies
commit_perjury C file_charges
commit_crime C report_crime
report_crime C investigate_crime
report_crime B investigate_crime
investigate_crime S collect_evidence
investigate_crime S interview_witness
collect_evidence B arrest_suspect
interview_witness B arrest_suspect
investigate_crime C arrest_suspect
arrest_suspect B file_charges
arrest_suspect C hire_lawyer
arrest_suspect B post_bail
file_charges C hold_hearing
hold_hearing B conduct_trial
file_charges C conduct_trial
hire_lawyer B conduct_trial
post_bail B conduct_trial
conduct_trial S present_evidence
conduct_trial S cross_examine_witness
conduct_trial S testify
conduct_trial S deliberate
take_oath B testify
present_evidence B deliberate
testify B deliberate
cross_examine_witness B deliberate
collect_evidence C present_evidence
interview_witness C testify
deliberate C reach_verdict
deliberate B reach_verdict
conduct_trial B reach_verdict
conduct_trial B find_guilty
present_evidence C find_guilty
reach_verdict B sentence_defendant
find_guilty C sentence_defendant
find_guilty B appeal_verdict
appeal_verdict C review_case
hire_lawyer C find_innocent
find_innocent C release_defendant
find_innocent C feel_relief
release_defendant C feel_relief
sentence_defendant C go_to_prison
sentence_defendant C pay_fine
go_to_prison C feel_disappointed
""",
    },
    "cooking": {
        "who": "Tom",
        "setting": "while he made dinner for his friends",
        "edges": """
invite_friends C plan_meal
invite_friends C cook_dinner
invite_friends B serve_dinner
plan_meal B buy_groceries
buy_groceries B cook_dinner
feel_hungry C cook_dinner
feel_hungry C order_takeout
cook_dinner S wash_vegetables
cook_dinner S chop_vegetables
cook_dinner S boil_water
cook_dinner S cook_pasta
cook_dinner S make_sauce
cook_dinner S season_food
wash_vegetables B chop_vegetables
chop_vegetables B make_sauce
boil_water B cook_pasta
make_sauce S taste_food
season_food B taste_food
make_sauce B serve_dinner
cook_pasta B serve_dinner
cook_dinner B serve_dinner
season_food C enjoy_meal
forget_stove C burn_food
burn_food C set_off_smoke_alarm
set_off_smoke_alarm C open_window
burn_food C order_takeout
burn_food B order_takeout
burn_food C feel_disappointed
order_takeout B eat_dinner
serve_dinner B eat_dinner
eat_dinner C feel_full
eat_dinner C enjoy_meal
eat_dinner B wash_dishes
enjoy_meal C thank_cook
bake_bread S knead_dough
bake_bread S preheat_oven
knead_dough B preheat_oven
bake_bread B serve_dinner
""",
    },
    "travel": {
        "who": "the Lee family",
        "setting": "on their trip to Lisbon",
        "edges": """
save_money C plan_trip
save_money B plan_trip
plan_trip S book_flight
plan_trip S book_hotel
plan_trip S apply_for_visa
plan_trip B pack_luggage
apply_for_visa B book_flight
book_flight B go_to_airport
pack_luggage B go_to_airport
travel S go_to_airport
travel S board_plane
travel S fly_abroad
travel S arrive_at_destination
travel C feel_happy
go_to_airport B check_in
check_in B pass_security
pass_security B board_plane
board_plane B fly_abroad
fly_abroad C feel_jet_lag
fly_abroad B arrive_at_destination
get_stuck_in_traffic C miss_flight
miss_flight C rebook_flight
miss_flight B rebook_flight
miss_flight C feel_stress
rebook_flight B board_plane
arrive_at_destination B check_into_hotel
check_into_hotel B rest
feel_jet_lag C rest
arrive_at_destination B explore_city
explore_city S visit_museum
explore_city S take_photos
explore_city C get_lost
get_lost C ask_for_directions
get_lost B ask_for_directions
visit_museum C learn
explore_city B return_home
take_photos C share_photos
return_home B share_photos
""",
    },
}

# Extra names that share a cluster with an event type (EV²'s clustering.json groups synonyms).
SYNONYMS: dict[str, list[str]] = {
    "study_for_exam": ["prepare for exam", "revise for exam"],
    "take_exam": ["sit exam", "write exam"],
    "pass_exam": ["pass test"],
    "feel_stress": ["stress", "feel anxious"],
    "learn": ["learning", "gain knowledge"],
    "conduct_trial": ["hold trial"],
    "find_guilty": ["convict"],
    "hire_lawyer": ["get attorney"],
    "cook_dinner": ["make dinner", "prepare food"],
    "eat_dinner": ["have dinner"],
    "travel": ["take trip", "go abroad"],
    "book_flight": ["buy plane ticket"],
    "explore_city": ["go sightseeing"],
    "rest": ["relax", "take rest"],
}

# EECKG sample: ConceptNet assertions (relation, start, end, weight) over EV² event types.
EECKG_ASSERTIONS = [
    ("Causes", "study_for_exam", "pass_exam", 3.0),
    ("Causes", "stay_up_late", "feel_tired", 2.0),
    ("Causes", "burn_food", "set_off_smoke_alarm", 2.0),
    ("Causes", "miss_flight", "rebook_flight", 1.5),
    ("HasSubevent", "take_exam", "answer_questions", 2.0),
    ("HasFirstSubevent", "cook_dinner", "wash_vegetables", 1.0),
    ("HasLastSubevent", "conduct_trial", "deliberate", 1.0),
    ("HasPrerequisite", "take_exam", "study_for_exam", 2.0),
    ("HasPrerequisite", "board_plane", "pass_security", 1.0),
    ("HasPrerequisite", "serve_dinner", "cook_dinner", 1.0),
    ("MotivatedByGoal", "study_for_exam", "get_good_grade", 1.0),
    ("MotivatedByGoal", "hire_lawyer", "find_innocent", 1.0),
    ("CausesDesire", "feel_hungry", "cook_dinner", 1.0),
    ("UsedFor", "read_textbook", "learn", 1.0),
    ("Desires", "feel_tired", "rest", 0.5),
]
EECKG_TRIPLES = [  # head, relation (paper names or ConceptNet), tail, weight
    ("buy groceries", "Before", "cook dinner", 1.0),
    ("get lost", "Causes", "ask for directions", 1.0),
    ("board plane", "After", "pass security", 1.0),
    ("feel full", "IsResult", "eat dinner", 1.0),
    ("visit museum", "IsSubevent", "explore city", 1.0),
    ("review notes", "Before", "take exam", 1.0),
    ("testify", "HasPrerequisite", "take oath", 1.0),
    ("present evidence", "Causes", "find guilty", 2.0),
    ("plan trip", "HasSubevent", "book hotel", 1.0),
    ("celebrate", "MotivatedByGoal", "feel happy", 1.0),
]

# AbsPyramid heads: (words with the noun and the verb as spans, noun concepts, verb concepts,
# event concepts, split). Words are ASER-style (lemmatised, PersonX), so each head is also an
# eventuality in the ASER sample. Concepts are (concept, label).
ABS_HEADS = [
    ("PersonX study for exam", "exam", [("test", 1), ("assessment", 1), ("holiday", 0)], "study",
     [("prepare", 1), ("learn", 1), ("dance", 0)], [("academic preparation", 1), ("leisure activity", 0)], "train"),
    ("PersonX take exam", "exam", [("test", 1), ("evaluation", 1)], "take", [("sit", 1), ("steal", 0)],
     [("assessment", 1)], "train"),
    ("PersonX pass exam", "exam", [("test", 1), ("meal", 0)], "pass", [("succeed in", 1), ("fail", 0)],
     [("achievement", 1), ("failure", 0)], "valid"),
    ("PersonX hire lawyer", "lawyer", [("legal professional", 1), ("chef", 0)], "hire", [("employ", 1)],
     [("legal preparation", 1)], "train"),
    ("PersonX testify in court", "court", [("legal institution", 1), ("kitchen", 0)], "testify",
     [("give evidence", 1)], [("legal proceeding", 1)], "test"),
    ("PersonY sentence PersonX", None, [], "sentence", [("punish", 1), ("reward", 0)], [("punishment", 1)], "train"),
    ("PersonX chop vegetable", "vegetable", [("food", 1), ("ingredient", 1), ("tool", 0)], "chop", [("cut", 1)],
     [("food preparation", 1)], "train"),
    ("PersonX cook pasta for dinner", "pasta", [("food", 1), ("dish", 1)], "cook", [("prepare", 1)],
     [("cooking", 1), ("cleaning", 0)], "valid"),
    ("PersonX burn food", "food", [("meal", 1)], "burn", [("overcook", 1), ("freeze", 0)],
     [("kitchen accident", 1)], "test"),
    ("PersonX book flight", "flight", [("trip", 1), ("travel arrangement", 1)], "book", [("reserve", 1), ("cancel", 0)],
     [("travel planning", 1)], "train"),
    ("PersonX pack luggage", "luggage", [("belongings", 1)], "pack", [("prepare", 1)],
     [("travel preparation", 1)], "train"),
    ("PersonX visit museum", "museum", [("attraction", 1), ("cultural institution", 1), ("airport", 0)], "visit",
     [("tour", 1)], [("sightseeing", 1)], "test"),
    ("PersonX miss flight", "flight", [("trip", 1)], "miss", [("lose", 1), ("catch", 0)],
     [("travel disruption", 1)], "valid"),
]

# ASER sample eventualities beyond the AbsPyramid heads: (words, pattern) with pronoun
# subjects, as ASER's extractor writes them.
ASER_EVENTUALITIES = [
    "i study for exam", "i review note", "i read textbook", "i take note", "i attend lecture",
    "i remember information", "i take exam", "i pass exam", "i fail exam", "i feel tired",
    "i be stressed", "i stay up late", "i cram", "i procrastinate", "i get good grade",
    "i celebrate", "i graduate", "she ask teacher", "we join study group", "i retake exam",
    "he commit crime", "someone report crime", "police investigate crime", "police arrest suspect",
    "he hire lawyer", "prosecutor file charge", "court hold hearing", "witness testify",
    "jury deliberate", "jury reach verdict", "he be find guilty", "he be find innocent",
    "judge sentence defendant", "he go to prison", "he appeal verdict", "he feel relieved",
    "he pay fine", "he tell lie", "lawyer present evidence", "he post bail",
    "i invite friend", "i plan meal", "i buy grocery", "i cook dinner", "i chop vegetable",
    "i boil water", "i cook pasta", "i make sauce", "i taste food", "i burn food",
    "smoke alarm go off", "i open window", "i order takeout", "we eat dinner", "i feel full",
    "i wash dish", "i be hungry", "i bake bread", "i knead dough", "we enjoy meal",
    "we plan trip", "we save money", "we book flight", "we book hotel", "we pack luggage",
    "we go to airport", "we check in", "we board plane", "we miss flight", "we rebook flight",
    "we arrive in lisbon", "we explore city", "we visit museum", "we get lost", "we ask for direction",
    "i feel jet lag", "we rest", "we take photo", "we return home", "we be happy",
]
# Discourse relations between sample eventualities: (head words, tail words, {sense: count}).
ASER_RELATIONS = [
    ("i study for exam", "i pass exam", {"Result": 3.0, "Precedence": 1.0}),
    ("i pass exam", "i study for exam", {"Reason": 2.0, "Succession": 1.0}),
    ("i review note", "i remember information", {"Result": 1.0}),
    ("i take note", "i review note", {"Precedence": 2.0}),
    ("i attend lecture", "i take note", {"Synchronous": 2.0, "Co_Occurrence": 1.0}),
    ("i stay up late", "i feel tired", {"Result": 2.0}),
    ("i feel tired", "i stay up late", {"Reason": 1.5}),
    ("i be stressed", "i stay up late", {"Result": 0.5, "Conjunction": 1.0}),
    ("i procrastinate", "i cram", {"Result": 1.0, "Precedence": 1.0}),
    ("i cram", "i fail exam", {"Condition": 0.5, "Co_Occurrence": 1.0}),
    ("i take exam", "i pass exam", {"Precedence": 1.0, "Contrast": 0.25}),
    ("i fail exam", "i retake exam", {"Precedence": 2.0}),
    ("i pass exam", "i celebrate", {"Precedence": 1.0, "Result": 1.0}),
    ("i get good grade", "i celebrate", {"Result": 1.0}),
    ("i graduate", "i celebrate", {"Synchronous": 1.0}),
    ("she ask teacher", "we join study group", {"Conjunction": 1.0}),
    ("i read textbook", "i study for exam", {"Instantiation": 1.0}),
    ("i study for exam", "i procrastinate", {"Contrast": 1.0, "Alternative": 0.5}),
    ("i study for exam", "i read textbook", {"Restatement": 0.3333333333333333}),
    ("i pass exam", "i fail exam", {"ChosenAlternative": 0.5, "Exception": 0.25}),
    ("he commit crime", "someone report crime", {"Precedence": 1.0}),
    ("someone report crime", "police investigate crime", {"Result": 1.0, "Precedence": 1.0}),
    ("police investigate crime", "police arrest suspect", {"Result": 1.0}),
    ("police arrest suspect", "he hire lawyer", {"Precedence": 1.0}),
    ("prosecutor file charge", "court hold hearing", {"Precedence": 2.0}),
    ("witness testify", "jury deliberate", {"Precedence": 1.0}),
    ("jury deliberate", "jury reach verdict", {"Result": 1.0, "Precedence": 1.0}),
    ("he be find guilty", "lawyer present evidence", {"Reason": 1.0}),
    ("he be find guilty", "judge sentence defendant", {"Precedence": 1.0}),
    ("judge sentence defendant", "he go to prison", {"Result": 2.0}),
    ("he be find innocent", "he feel relieved", {"Result": 1.0}),
    ("he appeal verdict", "he be find guilty", {"Succession": 1.0}),
    ("he tell lie", "he commit crime", {"Conjunction": 0.5}),
    ("he post bail", "he hire lawyer", {"Synchronous": 0.5}),
    ("he pay fine", "he go to prison", {"Alternative": 1.0, "Concession": 0.5}),
    ("i invite friend", "i plan meal", {"Result": 1.0}),
    ("i plan meal", "i buy grocery", {"Precedence": 1.0}),
    ("i buy grocery", "i cook dinner", {"Precedence": 2.0}),
    ("i be hungry", "i cook dinner", {"Result": 1.0, "Condition": 0.5}),
    ("i cook dinner", "i be hungry", {"Reason": 1.0}),
    ("i chop vegetable", "i make sauce", {"Precedence": 1.0}),
    ("i boil water", "i cook pasta", {"Precedence": 2.0}),
    ("i make sauce", "i taste food", {"Synchronous": 1.0}),
    ("i burn food", "smoke alarm go off", {"Result": 2.0}),
    ("smoke alarm go off", "i open window", {"Result": 1.0, "Precedence": 1.0}),
    ("i order takeout", "i burn food", {"Reason": 1.0}),
    ("we eat dinner", "i feel full", {"Result": 1.0}),
    ("we eat dinner", "i wash dish", {"Precedence": 1.0}),
    ("i wash dish", "we eat dinner", {"Succession": 1.0}),
    ("i knead dough", "i bake bread", {"Precedence": 1.0}),
    ("we enjoy meal", "we eat dinner", {"Co_Occurrence": 2.0}),
    ("we save money", "we plan trip", {"Precedence": 1.0}),
    ("we plan trip", "we book flight", {"Precedence": 1.0, "Instantiation": 0.5}),
    ("we book hotel", "we book flight", {"Conjunction": 1.0}),
    ("we pack luggage", "we go to airport", {"Precedence": 1.0}),
    ("we check in", "we board plane", {"Precedence": 1.0}),
    ("we miss flight", "we rebook flight", {"Result": 1.0}),
    ("we rebook flight", "we miss flight", {"Reason": 1.0}),
    ("we arrive in lisbon", "we explore city", {"Precedence": 1.0}),
    ("we explore city", "we get lost", {"Result": 0.5, "Co_Occurrence": 1.0}),
    ("we get lost", "we ask for direction", {"Result": 1.0}),
    ("i feel jet lag", "we rest", {"Result": 1.0}),
    ("we visit museum", "we take photo", {"Synchronous": 1.0}),
    ("we return home", "we be happy", {"Co_Occurrence": 1.0}),
    ("we board plane", "we miss flight", {"Contrast": 1.0, "Exception": 0.5}),
    ("PersonX study for exam", "PersonX pass exam", {"Result": 2.0}),
    ("PersonX take exam", "PersonX pass exam", {"Precedence": 1.0}),
    ("PersonX hire lawyer", "PersonX testify in court", {"Precedence": 1.0}),
    ("PersonY sentence PersonX", "PersonX hire lawyer", {"Succession": 1.0}),
    ("PersonX chop vegetable", "PersonX cook pasta for dinner", {"Precedence": 1.0}),
    ("PersonX burn food", "PersonX cook pasta for dinner", {"Contrast": 0.5}),
    ("PersonX book flight", "PersonX pack luggage", {"Precedence": 1.0}),
    ("PersonX miss flight", "PersonX book flight", {"Reason": 0.5}),
    ("PersonX visit museum", "PersonX book flight", {"Succession": 1.0}),
    ("PersonX pass exam", "i celebrate", {"Result": 1.0}),
]
# ASER concept sample: concept words -> the eventualities it abstracts, with scores.
ASER_CONCEPTS = {
    "__PERSON__0 prepare for test": [("i study for exam", 0.8), ("PersonX study for exam", 0.7), ("i review note", 0.3)],
    "__PERSON__0 sit test": [("i take exam", 0.9), ("PersonX take exam", 0.9), ("i retake exam", 0.6)],
    "__PERSON__0 succeed": [("i pass exam", 0.7), ("PersonX pass exam", 0.7), ("i graduate", 0.4)],
    "__PERSON__0 feel negative emotion": [("i be stressed", 0.8), ("i feel tired", 0.4)],
    "__PERSON__0 employ legal professional": [("he hire lawyer", 0.9), ("PersonX hire lawyer", 0.9)],
    "__AUTHORITY__ punish __PERSON__0": [("judge sentence defendant", 0.8), ("PersonY sentence PersonX", 0.8)],
    "__PERSON__0 prepare food": [("i cook dinner", 0.9), ("i chop vegetable", 0.6), ("PersonX chop vegetable", 0.6),
                                 ("PersonX cook pasta for dinner", 0.8), ("i make sauce", 0.5)],
    "__PERSON__0 have kitchen accident": [("i burn food", 0.8), ("PersonX burn food", 0.8)],
    "__PERSON__0 arrange travel": [("we book flight", 0.9), ("PersonX book flight", 0.9), ("we book hotel", 0.8)],
    "__PERSON__0 go sightseeing": [("we visit museum", 0.7), ("PersonX visit museum", 0.7), ("we explore city", 0.8)],
    "__PERSON__0 have travel disruption": [("we miss flight", 0.9), ("PersonX miss flight", 0.9), ("we get lost", 0.3)],
}

# CLoMo sample items: (id_string, split, qtype, P statements, Premise1, Premise2, Q, output statements)
CLOMO_ITEMS = [
    ("train_9001", "test", 3,
     ["Students who join a study group score higher on the final exam than students who study alone.",
      "Therefore, joining a study group improves exam performance."],
     "Students who join study groups were already the strongest students before the course began.",
     "Students in study groups spend most of their meetings chatting about topics unrelated to the course.",
     "Which of the following, if true, most seriously weakens the argument?",
     ["Students who join a study group spend more hours with the course material than students who study alone.",
      "Therefore, joining a study group improves exam performance."]),
    ("train_9002", "test", 0,
     ["Maya reviewed her notes every evening this semester.",
      "So she will remember enough to pass the exam."],
     "Reviewing notes every evening is enough to retain the material tested on the exam.",
     "The exam tests only material that appears in the lecture notes.",
     "Which one of the following is an assumption required by the argument?",
     ["Maya reviewed her notes every evening this semester, and her notes cover the exam topics.",
      "So she will remember enough to pass the exam."]),
    ("train_9003", "test", 2,
     ["The defendant's fingerprints were found on the safe.",
      "Hence the jury should find him guilty of the theft."],
     "The defendant had never been inside the building before the night of the theft.",
     "The safe had been wiped clean the morning before the theft.",
     "Which of the following, if true, most strengthens the argument?",
     ["The defendant's fingerprints were found on the freshly cleaned safe.",
      "Hence the jury should find him guilty of the theft."]),
    ("train_9004", "test", 3,
     ["A witness testified that she saw the accused leave the bank at noon.",
      "Therefore the accused could not have been at the restaurant when the fraud was committed."],
     "The witness later admitted that she was not wearing her glasses that day.",
     "The restaurant is a two-minute walk from the bank.",
     "Which of the following, if true, most seriously weakens the argument?",
     ["A witness testified that she saw the accused leave the bank at noon, just before the fraud was committed at the restaurant.",
      "Therefore the accused could not have been at the restaurant when the fraud was committed."]),
    ("train_9005", "test", 1,
     ["Tom burned the sauce twice this month.",
      "He should therefore buy a heavier pan."],
     "Sauces burn mostly because thin pans spread heat unevenly.",
     "Tom's burned sauces were all cooked in his thin pan.",
     "Which one of the following, if assumed, enables the conclusion to be properly drawn?",
     ["Tom burned the sauce twice this month, each time in a pan that spreads heat unevenly.",
      "He should therefore buy a heavier pan."]),
    ("train_9006", "test", 0,
     ["Restaurants that buy vegetables from local farms serve fresher meals.",
      "So the new bistro, which buys locally, serves fresher meals than the chain across the street."],
     "The chain across the street does not buy its vegetables from local farms.",
     "Freshness of a meal depends mostly on how soon vegetables are cooked after harvest.",
     "Which one of the following is an assumption on which the argument depends?",
     ["Restaurants that cook vegetables soon after harvest serve fresher meals.",
      "So the new bistro, which buys locally, serves fresher meals than the chain across the street."]),
    ("train_9007", "dev", 2,
     ["Travellers who book flights two months ahead pay less.",
      "So the Lee family saved money on their trip to Lisbon."],
     "The Lee family booked their flights to Lisbon three months before the trip.",
     "Hotel prices in Lisbon fall for guests who book far ahead.",
     "Which of the following, if true, most strengthens the argument?",
     ["Travellers who book flights and hotels two months ahead pay less.",
      "So the Lee family saved money on their hotel in Lisbon."]),
    ("train_9008", "dev", 3,
     ["Airports with more security lanes have shorter waiting times.",
      "So adding lanes at the city airport will stop travellers from missing flights."],
     "Most travellers who miss flights at the city airport arrive late because of traffic.",
     "The new lanes will be staffed by moving officers from the check-in desks.",
     "Which of the following, if true, most seriously weakens the argument?",
     ["Airports with more security lanes have shorter waiting times.",
      "So adding lanes at the city airport will shorten the whole time travellers need from check-in to boarding."]),
]
