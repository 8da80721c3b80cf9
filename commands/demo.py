"""The demo data set of `db seed-demo`: realistic enough to show what the API does.

Organizations, users, services, tags and bots are data: `commands/demo.json`, a `db load`
file, read and checked by the loader as any data file is. The bot requests are generated
here instead, because their history ends when the seeding runs: a few hundred over the last
six weeks, drawn from a fixed seed, each with an id derived from its number, so that seeding
twice writes each document once. The demo tokens are only described here: their secrets
are drawn when `db seed-demo` issues them, and only their hashes are stored.
"""

import datetime as dt
import hashlib
import random
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from bson import ObjectId
from pymongo.database import Database

from commands import load_files, loading

DATA_FILE = Path(__file__).resolve().parent / "demo.json"
SEED = 20260102
REQUEST_COUNT = 320
HISTORY = dt.timedelta(days=42)


def demo_id(kind: str, key: str) -> ObjectId:
    """A stable id per generated document, so a second seeding finds the first one's."""
    return ObjectId(hashlib.sha256(f"bot-catalogue-demo/{kind}/{key}".encode()).digest()[:12])


# Values the generated requests draw their inputs from, by input name.
SAMPLES = {
    "topic": ["Remote onboarding that works", "Choosing a CRM", "Cold brew at home"],
    "audience": ["HR managers", "small business owners", "first-time buyers"],
    "pageTitle": ["Pricing", "About us", "Wireless headphones X200"],
    "pageSummary": ["Plans and prices for teams of every size."],
    "keywords": ["pricing, plans, teams", "headphones, wireless, noise cancelling"],
    "campaign": ["Spring sale, 20% off all garden furniture until April 30."],
    "transcript": ["Alice: Let's ship on Friday. Bob: QA needs one more day. ..."],
    "text": ["Thank you for your order. It will ship within two business days."],
    "question": ["Monthly revenue per region in 2025", "Which customers churned last quarter?"],
    "schema": ["orders(id, region, total, created_at)"],
    "diff": ["--- a/app.py\n+++ b/app.py\n@@ -1,3 +1,4 @@\n+import os\n"],
    "pattern": [r"^\d{3}-\d{4}$", r"[A-Z][a-z]+(?: [A-Z][a-z]+)*"],
    "flavor": ["PCRE", "JavaScript"],
    "customerMessage": ["My package has not arrived yet and the tracking has not moved."],
    "policyNotes": ["Refunds within 30 days; free returns."],
    "productDescription": ["A budgeting app for households with shared expenses."],
    "announcement": ["We just opened our second office, in Lisbon!"],
    "clause": ["The Supplier shall indemnify the Customer against all losses ..."],
    "csvSample": ["month,revenue\n2025-01,10400\n2025-02,9800\n2025-03,15100"],
    "productName": ["Chai tea", "Aniseed syrup", "Wireless headphones X200"],
    "features": ["40-hour battery, active noise cancelling, foldable"],
    "role": ["Backend engineer", "Product designer", "Support specialist"],
    "location": ["Berlin", "Austin", "Remote (EU)"],
    "changelog": ["- Faster search\n- Dark mode\n- Fix: export of large reports"],
    "orderNumber": ["NW-10248", "NW-10311", "NW-10402"],
    "supplier": ["Exotic Liquids", "Tokyo Traders", "Pavlova, Ltd."],
    "timeline": ["09:02 alerts fire; 09:10 rollback started; 09:25 recovered"],
    "account": ["Initrode", "Hooli", "Vandelay Industries"],
    "project": ["Y2K remediation", "Jump to Conclusions mat"],
    "protocol": ["Phase II, randomized, double-blind study of ..."],
}

# The reply each bot gives, filled in with the inputs of the request.
REPLIES = {
    "blog-post-writer": "Here is a {tone} draft of about {wordCount} words on {topic}.",
    "seo-meta-description": "Three meta descriptions for “{pageTitle}”, each under 160 characters.",
    "email-subject-lines": "{count} subject lines for your campaign, strongest first.",
    "meeting-notes-summarizer": (
        "Summary in {format}: 4 decisions, 6 action items, 2 open questions."
    ),
    "document-translator": "Translated into {targetLanguage}; 3 terms were kept in the original.",
    "sql-query-helper": "A {dialect} query answering: {question}",
    "code-review-assistant": "Reviewed the {language} diff: 2 issues to fix, 3 suggestions.",
    "regex-explainer": "The pattern {pattern} broken down into 5 parts, with examples.",
    "support-reply-drafter": "A {tone} reply that acknowledges the problem and offers next steps.",
    "faq-builder": "{count} questions and answers, grouped by topic.",
    "social-post-generator": "A {platform} post ready to publish.",
    "contract-clause-explainer": (
        "Plain-language explanation under {jurisdiction} law; 1 unusual term flagged."
    ),
    "csv-insights": "5 findings and 2 outliers in your data.",
    "product-description-writer": "A {tone} description of {productName} in three lengths.",
    "job-description-writer": "A job description for a {seniority} {role}.",
    "release-notes-writer": "Release notes for {audience}: 3 features, 5 fixes.",
    "northwind-order-status-reply": "Reply for order {orderNumber}: shipped, arriving in 2 days.",
    "northwind-catalogue-copy": "Catalogue entry for {productName} in house style.",
    "northwind-supplier-email": "A {purpose} email to {supplier}.",
    "globex-incident-postmortem": "A blameless {severity} post-mortem with 4 follow-up actions.",
    "globex-sales-call-summary": "Call with {account}: 3 needs, 2 objections, next step booked.",
    "initech-tps-report": "TPS report for {project}, week {week}; cover sheet attached.",
    "initech-policy-qa": "Answer with the handbook section cited: {question}",
    "umbrella-patient-letter": "A {letterType} letter in plain language ({language}).",
    "umbrella-trial-protocol-summary": (
        "A two-page summary with eligibility criteria and endpoints."
    ),
}


def _sample_value(rng: random.Random, field: dict):
    kind = field["type"]
    if kind == "select":
        return rng.choice(field["options"])
    if kind == "multiselect":
        return rng.sample(field["options"], rng.randint(1, len(field["options"])))
    if kind == "number":
        return rng.randint(field["min"], field["max"])
    if kind == "boolean":
        return rng.random() < 0.5
    return rng.choice(SAMPLES[field["name"]])


def _request_inputs(rng: random.Random, bot: dict) -> dict:
    inputs = {}
    for field in bot["inputs"]:
        if field["required"] or rng.random() < 0.7:
            inputs[field["name"]] = _sample_value(rng, field)
        elif "default" in field:
            inputs[field["name"]] = field["default"]
    return inputs


def _reply(bot: dict, inputs: dict) -> str:
    values = {field["name"]: field.get("default", "") for field in bot["inputs"]} | inputs
    return REPLIES[bot["slug"]].format_map(values)


def _ip(rng: random.Random) -> str:
    return rng.choice(
        [
            f"203.0.113.{rng.randint(1, 254)}",
            f"198.51.100.{rng.randint(1, 254)}",
            f"2001:db8::{rng.randint(1, 0xFFFF):x}",
        ]
    )


def requests(users: list[dict], bots: list[dict], now: dt.datetime) -> list[dict]:
    """Bot requests by the ordinary users, mostly for one of their organizations and then
    mostly of its own bots, with their history ending at `now`."""
    rng = random.Random(SEED)
    members = [user for user in users if user["role"] == "user"]
    documents = []
    for number in range(REQUEST_COUNT):
        user = rng.choice(members)
        memberships = user["organizations"]
        organization = rng.choice(memberships) if memberships and rng.random() < 0.8 else None
        candidates = [
            bot for bot in bots if bot["isPublic"] or bot["organization"] in {None, organization}
        ]
        if organization:
            candidates += [bot for bot in bots if bot["organization"] == organization] * 3
        bot = rng.choice(candidates)
        inputs = _request_inputs(rng, bot)
        created = now - HISTORY * rng.random()
        tokens = rng.randint(120, 2400)
        documents.append(
            {
                "_id": demo_id("request", str(number)),
                "bot": bot["_id"],
                "createdBy": user["_id"],
                "organization": organization,
                "inputs": inputs,
                "response": {
                    "message": _reply(bot, inputs),
                    "model": bot["modelKey"],
                    "usage": {"promptTokens": tokens // 3, "completionTokens": tokens},
                    "finishReason": "stop",
                },
                "ip": _ip(rng),
                "createdAt": created,
                "updatedAt": created + dt.timedelta(milliseconds=rng.randint(900, 25000)),
            }
        )
    return documents


def entries(db: Database, now: dt.datetime) -> list[load_files.Entry]:
    """The data file and the requests generated over it, checked by the loader as one load.

    The file is checked on its own first, as the requests are drawn from its documents;
    a loading.LoadError lists the problems of either check.
    """
    files, problems = load_files.read_files([DATA_FILE])
    stored = defaultdict(list)
    for entry in loading.validate(db, files, problems).entries:
        stored[entry.collection].append(entry.document)
    generated = {"botrequests": requests(stored["users"], stored["bots"], now)}
    everything = files + load_files.documents(generated, "generated bot requests")
    return loading.validate(db, everything).entries


@dataclass(frozen=True)
class DemoToken:
    """A token to issue over the demo data; `owner` is a user's email or an organization's
    name in the data file, as `tokens issue` takes them."""

    name: str
    kind: str
    owner: str
    description: str

    @property
    def id(self) -> ObjectId:
        return demo_id("token", self.name)

    @property
    def label(self) -> str:
        return f"demo {self.name}"

    def owner_id(self, entries: list[load_files.Entry]) -> ObjectId:
        collection, key = ("users", "email") if self.kind == "user" else ("organizations", "name")
        return next(
            entry.document["_id"]
            for entry in entries
            if entry.collection == collection and entry.document[key] == self.owner
        )


TOKENS = (
    DemoToken(
        "member",
        "user",
        "ada@northwind.example",
        "Ada Lovelace <ada@northwind.example>, member of Northwind Traders and Globex Corporation",
    ),
    DemoToken(
        "admin",
        "user",
        "grace@botcatalogue.example",
        "Grace Hopper <grace@botcatalogue.example>, admin: sees every bot in detail",
    ),
    DemoToken(
        "organization",
        "organization",
        "Northwind Traders",
        "the organization token of Northwind Traders",
    ),
)
