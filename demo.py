"""The demo data set of `db seed-demo`: realistic enough to show what the API does.

Four organizations with their members, an admin, a freelancer without organization,
public bots in five services, private and public custom bots of each organization, and a
few hundred bot requests over the last six weeks. Every id is derived from a fixed name
and the content from a fixed seed, so seeding twice writes each document once.
"""

import datetime as dt
import hashlib
import random
from dataclasses import dataclass

from bson import ObjectId

SEED = 20260102
REQUEST_COUNT = 320
HISTORY = dt.timedelta(days=42)


def demo_id(kind: str, key: str) -> ObjectId:
    """A stable id per demo document, so a second seeding finds the first one's documents."""
    return ObjectId(hashlib.sha256(f"bot-catalogue-demo/{kind}/{key}".encode()).digest()[:12])


ORGANIZATIONS = {
    "northwind": "Northwind Traders",
    "globex": "Globex Corporation",
    "initech": "Initech",
    "umbrella": "Umbrella Health",
}

# key: (name, email, role, organization keys)
USERS = {
    "ada": ("Ada Lovelace", "ada@northwind.example", "user", ["northwind", "globex"]),
    "linus": ("Linus Carter", "linus@northwind.example", "user", ["northwind"]),
    "mei": ("Mei Tanaka", "mei@globex.example", "user", ["globex"]),
    "omar": ("Omar Haddad", "omar@globex.example", "user", ["globex"]),
    "peter": ("Peter Gibbons", "peter@initech.example", "user", ["initech"]),
    "samir": ("Samir Nagheenanajar", "samir@initech.example", "user", ["initech"]),
    "alice": ("Alice Abernathy", "alice@umbrella.example", "user", ["umbrella"]),
    "carlos": ("Carlos Oliveira", "carlos@umbrella.example", "user", ["umbrella"]),
    "jordan": ("Jordan Reyes", "jordan@freelance.example", "user", []),
    "grace": ("Grace Hopper", "grace@botcatalogue.example", "admin", []),
}

# key: (name, slug, directory)
SERVICES = {
    "writing": ("Writing", "writing", "content"),
    "marketing": ("Marketing", "marketing", "growth"),
    "support": ("Customer Support", "customer-support", "service"),
    "engineering": ("Engineering", "engineering", "technology"),
    "analytics": ("Data & Analytics", "data-analytics", "technology"),
    "legal": ("Legal & Compliance", "legal-compliance", "business"),
}

TAGS = {
    key: key.replace("-", " ").title().replace("Seo", "SEO")
    for key in (
        "writing",
        "seo",
        "email",
        "summarization",
        "translation",
        "code",
        "productivity",
        "social-media",
        "legal",
        "customer-support",
        "data",
    )
}

TONES = ["friendly", "professional", "witty", "empathetic"]
LANGUAGES = ["en", "fr", "de", "es", "pt", "ja"]


def text(name, label, *, required=True, multiline=False, placeholder=None, max_length=None):
    field = {"name": name, "label": label, "type": "textarea" if multiline else "text"}
    field["required"] = required
    if placeholder:
        field["placeholder"] = placeholder
    if max_length:
        field["maxLength"] = max_length
    return field


def select(name, label, options, default=None, *, multiple=False):
    return {
        "name": name,
        "label": label,
        "type": "multiselect" if multiple else "select",
        "required": default is None,
        "options": options,
        **({"default": default} if default is not None else {}),
    }


def number(name, label, minimum, maximum, default):
    return {
        "name": name,
        "label": label,
        "type": "number",
        "required": False,
        "min": minimum,
        "max": maximum,
        "default": default,
    }


def flag(name, label, default=False):
    return {"name": name, "label": label, "type": "boolean", "required": False, "default": default}


@dataclass(frozen=True)
class DemoBot:
    slug: str
    name: str
    description: str
    service: str
    tags: tuple[str, ...]
    credit_cost: float
    model_key: str
    inputs: tuple[dict, ...]
    reply: str
    organization: str | None = None
    is_public: bool = True
    apply_to_api: bool = True


BOTS = (
    DemoBot(
        "blog-post-writer",
        "Blog Post Writer",
        "Drafts a structured blog post with headings, an introduction and a conclusion.",
        "writing",
        ("writing", "seo"),
        3,
        "gpt-4o",
        (
            text("topic", "Topic", placeholder="e.g. Remote onboarding that works"),
            text("audience", "Audience", required=False),
            select("tone", "Tone", TONES, "professional"),
            number("wordCount", "Length in words", 300, 3000, 800),
        ),
        "Here is a {tone} draft of about {wordCount} words on {topic}.",
    ),
    DemoBot(
        "seo-meta-description",
        "SEO Meta Description Generator",
        "Writes meta descriptions under 160 characters that match the page's keywords.",
        "marketing",
        ("seo",),
        1,
        "gpt-4o-mini",
        (
            text("pageTitle", "Page title"),
            text("pageSummary", "What the page is about", multiline=True),
            text("keywords", "Keywords, comma-separated", required=False),
        ),
        "Three meta descriptions for “{pageTitle}”, each under 160 characters.",
    ),
    DemoBot(
        "email-subject-lines",
        "Email Subject Line Ideas",
        "Suggests subject lines for a campaign, ranked by expected open rate.",
        "marketing",
        ("email", "writing"),
        1,
        "gpt-4o-mini",
        (
            text("campaign", "Campaign description", multiline=True),
            number("count", "Number of ideas", 3, 20, 10),
        ),
        "{count} subject lines for your campaign, strongest first.",
    ),
    DemoBot(
        "meeting-notes-summarizer",
        "Meeting Notes Summarizer",
        "Turns a meeting transcript into decisions, action items and open questions.",
        "writing",
        ("summarization", "productivity"),
        2,
        "claude-3-5-sonnet",
        (
            text("transcript", "Transcript", multiline=True, max_length=50000),
            select("format", "Format", ["bullets", "paragraphs", "action-items"], "bullets"),
        ),
        "Summary in {format}: 4 decisions, 6 action items, 2 open questions.",
    ),
    DemoBot(
        "document-translator",
        "Document Translator",
        "Translates text while keeping formatting, names and technical terms intact.",
        "writing",
        ("translation",),
        2,
        "gpt-4o",
        (
            text("text", "Text to translate", multiline=True),
            select("sourceLanguage", "From", ["auto", *LANGUAGES], "auto"),
            select("targetLanguage", "To", LANGUAGES),
        ),
        "Translated into {targetLanguage}; 3 terms were kept in the original.",
    ),
    DemoBot(
        "sql-query-helper",
        "SQL Query Helper",
        "Writes and explains a SQL query from a question and a table schema.",
        "analytics",
        ("code", "data"),
        2,
        "gpt-4o",
        (
            text("question", "Question", placeholder="Monthly revenue per region in 2025"),
            select("dialect", "Dialect", ["postgresql", "mysql", "sqlite", "bigquery"]),
            text("schema", "Table definitions", required=False, multiline=True),
        ),
        "A {dialect} query answering: {question}",
    ),
    DemoBot(
        "code-review-assistant",
        "Code Review Assistant",
        "Reviews a diff for bugs, security issues and readability, with suggested fixes.",
        "engineering",
        ("code",),
        4,
        "claude-3-5-sonnet",
        (
            text("diff", "Unified diff", multiline=True, max_length=100000),
            select("language", "Language", ["python", "typescript", "go", "java", "rust"]),
            select(
                "focus",
                "Focus",
                ["security", "performance", "readability"],
                ["security", "readability"],
                multiple=True,
            ),
        ),
        "Reviewed the {language} diff: 2 issues to fix, 3 suggestions.",
    ),
    DemoBot(
        "regex-explainer",
        "Regex Explainer",
        "Explains a regular expression piece by piece and lists strings it matches.",
        "engineering",
        ("code",),
        1,
        "gpt-4o-mini",
        (text("pattern", "Regular expression"), text("flavor", "Flavor", required=False)),
        "The pattern {pattern} broken down into 5 parts, with examples.",
    ),
    DemoBot(
        "support-reply-drafter",
        "Support Reply Drafter",
        "Drafts a reply to a customer message that follows your support policy.",
        "support",
        ("customer-support", "email"),
        2,
        "gpt-4o",
        (
            text("customerMessage", "Customer message", multiline=True),
            text("policyNotes", "Policy notes", required=False, multiline=True),
            select("tone", "Tone", TONES, "empathetic"),
        ),
        "A {tone} reply that acknowledges the problem and offers next steps.",
    ),
    DemoBot(
        "faq-builder",
        "FAQ Builder",
        "Builds a list of frequently asked questions and answers for a product page.",
        "support",
        ("customer-support", "writing"),
        3,
        "gpt-4o",
        (
            text("productDescription", "Product description", multiline=True),
            number("count", "Questions", 5, 30, 10),
        ),
        "{count} questions and answers, grouped by topic.",
    ),
    DemoBot(
        "social-post-generator",
        "Social Media Post Generator",
        "Writes a post for the platform of your choice from an announcement.",
        "marketing",
        ("social-media", "writing"),
        1,
        "gpt-4o-mini",
        (
            text("announcement", "Announcement", multiline=True),
            select("platform", "Platform", ["linkedin", "x", "instagram", "mastodon"]),
            flag("includeHashtags", "Add hashtags", True),
        ),
        "A {platform} post ready to publish.",
    ),
    DemoBot(
        "contract-clause-explainer",
        "Contract Clause Explainer",
        "Explains a contract clause in plain language and flags unusual terms.",
        "legal",
        ("legal", "summarization"),
        5,
        "claude-3-5-sonnet",
        (
            text("clause", "Clause", multiline=True),
            select("jurisdiction", "Jurisdiction", ["US", "UK", "EU", "CA", "AU"]),
        ),
        "Plain-language explanation under {jurisdiction} law; 1 unusual term flagged.",
    ),
    DemoBot(
        "csv-insights",
        "CSV Insights",
        "Finds trends, outliers and summary statistics in a CSV sample.",
        "analytics",
        ("data", "summarization"),
        3,
        "gpt-4o",
        (
            text("csvSample", "CSV sample", multiline=True, max_length=200000),
            text("question", "What do you want to know?", required=False),
        ),
        "5 findings and 2 outliers in your data.",
    ),
    DemoBot(
        "product-description-writer",
        "Product Description Writer",
        "Writes product descriptions that sell, in the length your shop needs.",
        "marketing",
        ("writing", "seo"),
        2,
        "gpt-4o-mini",
        (
            text("productName", "Product name"),
            text("features", "Key features", multiline=True),
            select("tone", "Tone", TONES, "friendly"),
        ),
        "A {tone} description of {productName} in three lengths.",
    ),
    DemoBot(
        "job-description-writer",
        "Job Description Writer",
        "Drafts an inclusive job description from a role, a level and a location.",
        "writing",
        ("writing",),
        2,
        "mistral-large",
        (
            text("role", "Role"),
            select("seniority", "Seniority", ["junior", "mid", "senior", "lead"]),
            text("location", "Location", required=False),
            flag("remote", "Remote friendly"),
        ),
        "A job description for a {seniority} {role}.",
    ),
    DemoBot(
        "release-notes-writer",
        "Release Notes Writer",
        "Turns a changelog into release notes for developers or for customers.",
        "engineering",
        ("writing", "code"),
        1.5,
        "llama-3.1-70b",
        (
            text("changelog", "Changelog", multiline=True),
            select("audience", "Audience", ["developers", "customers"], "customers"),
        ),
        "Release notes for {audience}: 3 features, 5 fixes.",
        apply_to_api=False,
    ),
    DemoBot(
        "northwind-order-status-reply",
        "Order Status Reply",
        "Answers where-is-my-order emails from Northwind's order and carrier data.",
        "support",
        ("customer-support", "email"),
        2,
        "gpt-4o",
        (
            text("orderNumber", "Order number", placeholder="NW-10248"),
            text("customerMessage", "Customer message", multiline=True),
        ),
        "Reply for order {orderNumber}: shipped, arriving in 2 days.",
        organization="northwind",
        is_public=False,
    ),
    DemoBot(
        "northwind-catalogue-copy",
        "Catalogue Copywriter",
        "Writes catalogue entries in Northwind's house style.",
        "marketing",
        ("writing",),
        2,
        "gpt-4o-mini",
        (text("productName", "Product name"), text("supplier", "Supplier", required=False)),
        "Catalogue entry for {productName} in house style.",
        organization="northwind",
        is_public=False,
    ),
    DemoBot(
        "northwind-supplier-email",
        "Supplier Email Assistant",
        "Drafts purchase and follow-up emails to suppliers; shared by Northwind with everyone.",
        "support",
        ("email",),
        1,
        "gpt-4o-mini",
        (
            text("supplier", "Supplier"),
            select("purpose", "Purpose", ["order", "follow-up", "complaint"]),
        ),
        "A {purpose} email to {supplier}.",
        organization="northwind",
    ),
    DemoBot(
        "globex-incident-postmortem",
        "Incident Post-mortem Writer",
        "Drafts a blameless post-mortem from an incident timeline.",
        "engineering",
        ("writing", "code"),
        4,
        "claude-3-5-sonnet",
        (
            text("timeline", "Timeline", multiline=True),
            select("severity", "Severity", ["SEV1", "SEV2", "SEV3"]),
        ),
        "A blameless {severity} post-mortem with 4 follow-up actions.",
        organization="globex",
        is_public=False,
    ),
    DemoBot(
        "globex-sales-call-summary",
        "Sales Call Summarizer",
        "Summarizes a sales call into needs, objections and next steps for the CRM.",
        "analytics",
        ("summarization",),
        2,
        "gpt-4o",
        (text("transcript", "Transcript", multiline=True), text("account", "Account")),
        "Call with {account}: 3 needs, 2 objections, next step booked.",
        organization="globex",
        is_public=False,
    ),
    DemoBot(
        "initech-tps-report",
        "TPS Report Generator",
        "Fills in a TPS report, cover sheet included.",
        "writing",
        ("productivity",),
        1,
        "gpt-4o-mini",
        (
            text("project", "Project"),
            number("week", "Week number", 1, 53, 1),
            flag("coverSheet", "Include cover sheet", True),
        ),
        "TPS report for {project}, week {week}; cover sheet attached.",
        organization="initech",
        is_public=False,
    ),
    DemoBot(
        "initech-policy-qa",
        "HR Policy Q&A",
        "Answers questions about Initech's HR handbook, citing the section.",
        "support",
        ("customer-support",),
        1,
        "mistral-large",
        (text("question", "Question"),),
        "Answer with the handbook section cited: {question}",
        organization="initech",
        is_public=False,
    ),
    DemoBot(
        "umbrella-patient-letter",
        "Patient Letter Drafter",
        "Drafts clear appointment and results letters for patients.",
        "writing",
        ("writing",),
        3,
        "gpt-4o",
        (
            select("letterType", "Letter", ["appointment", "results", "referral"]),
            select("language", "Language", LANGUAGES, "en"),
        ),
        "A {letterType} letter in plain language ({language}).",
        organization="umbrella",
        is_public=False,
    ),
    DemoBot(
        "umbrella-trial-protocol-summary",
        "Trial Protocol Summarizer",
        "Summarizes a clinical trial protocol for the review board.",
        "legal",
        ("summarization", "legal"),
        5,
        "claude-3-5-sonnet",
        (text("protocol", "Protocol", multiline=True, max_length=200000),),
        "A two-page summary with eligibility criteria and endpoints.",
        organization="umbrella",
        is_public=False,
    ),
)

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
    return rng.choice(SAMPLES.get(field["name"], [f"Example {field['label'].lower()}"]))


def _request_inputs(rng: random.Random, bot: DemoBot) -> dict:
    inputs = {}
    for field in bot.inputs:
        if field["required"] or rng.random() < 0.7:
            inputs[field["name"]] = _sample_value(rng, field)
        elif "default" in field:
            inputs[field["name"]] = field["default"]
    return inputs


def _reply(bot: DemoBot, inputs: dict) -> str:
    values = {field["name"]: field.get("default", "") for field in bot.inputs} | inputs
    return bot.reply.format_map(values)


def _ms(moment: dt.datetime) -> dt.datetime:
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def _bots(rng: random.Random, now: dt.datetime) -> list[dict]:
    documents = []
    for bot in BOTS:
        created = now - dt.timedelta(days=rng.randint(60, 240), minutes=rng.randint(0, 1440))
        updated = created + (now - created) * rng.random() * 0.8
        documents.append(
            {
                "_id": demo_id("bot", bot.slug),
                "slug": bot.slug,
                "name": bot.name,
                "description": bot.description,
                "creditCost": bot.credit_cost,
                "modelKey": bot.model_key,
                "applyToApi": bot.apply_to_api,
                "inputs": list(bot.inputs),
                "isPublic": bot.is_public,
                "organization": bot.organization and demo_id("organization", bot.organization),
                "service": demo_id("service", bot.service),
                "tags": [demo_id("tag", tag) for tag in bot.tags],
                "createdAt": _ms(created),
                "updatedAt": _ms(updated),
            }
        )
    return documents


def _ip(rng: random.Random) -> str:
    return rng.choice(
        [
            f"203.0.113.{rng.randint(1, 254)}",
            f"198.51.100.{rng.randint(1, 254)}",
            f"2001:db8::{rng.randint(1, 0xFFFF):x}",
        ]
    )


def _requests(rng: random.Random, now: dt.datetime) -> list[dict]:
    users = [key for key, (_, _, role, _) in USERS.items() if role == "user"]
    documents = []
    for number_ in range(REQUEST_COUNT):
        user = rng.choice(users)
        memberships = USERS[user][3]
        organization = rng.choice(memberships) if memberships and rng.random() < 0.8 else None
        candidates = [
            bot for bot in BOTS if bot.is_public or bot.organization in {None, organization}
        ]
        if organization:
            candidates += [bot for bot in BOTS if bot.organization == organization] * 3
        bot = rng.choice(candidates)
        inputs = _request_inputs(rng, bot)
        created = now - HISTORY * rng.random()
        tokens = rng.randint(120, 2400)
        documents.append(
            {
                "_id": demo_id("request", str(number_)),
                "bot": demo_id("bot", bot.slug),
                "createdBy": demo_id("user", user),
                "organization": organization and demo_id("organization", organization),
                "inputs": inputs,
                "response": {
                    "message": _reply(bot, inputs),
                    "model": bot.model_key,
                    "usage": {"promptTokens": tokens // 3, "completionTokens": tokens},
                    "finishReason": "stop",
                },
                "ip": _ip(rng),
                "createdAt": _ms(created),
                "updatedAt": _ms(created + dt.timedelta(milliseconds=rng.randint(900, 25000))),
            }
        )
    return documents


def documents(now: dt.datetime) -> dict[str, list[dict]]:
    """The whole data set, as `db load` would take it, with its history ending at `now`."""
    rng = random.Random(SEED)
    return {
        "organizations": [
            {"_id": demo_id("organization", key), "name": name}
            for key, name in ORGANIZATIONS.items()
        ],
        "users": [
            {
                "_id": demo_id("user", key),
                "name": name,
                "email": email,
                "role": role,
                "organizations": [demo_id("organization", org) for org in organizations],
            }
            for key, (name, email, role, organizations) in USERS.items()
        ],
        "services": [
            {"_id": demo_id("service", key), "name": name, "slug": slug, "directory": directory}
            for key, (name, slug, directory) in SERVICES.items()
        ],
        "tags": [{"_id": demo_id("tag", key), "name": name} for key, name in TAGS.items()],
        "bots": _bots(rng, now),
        "botrequests": _requests(rng, now),
    }


@dataclass(frozen=True)
class DemoToken:
    name: str
    kind: str
    owner: ObjectId
    description: str

    @property
    def id(self) -> ObjectId:
        return demo_id("token", self.name)

    @property
    def label(self) -> str:
        return f"demo {self.name}"


TOKENS = (
    DemoToken(
        "member",
        "user",
        demo_id("user", "ada"),
        "Ada Lovelace <ada@northwind.example>, member of Northwind Traders and Globex Corporation",
    ),
    DemoToken(
        "admin",
        "user",
        demo_id("user", "grace"),
        "Grace Hopper <grace@botcatalogue.example>, admin: sees every bot in detail",
    ),
    DemoToken(
        "organization",
        "organization",
        demo_id("organization", "northwind"),
        "the organization token of Northwind Traders",
    ),
)
