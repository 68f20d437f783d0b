from email.message import EmailMessage
from email.utils import format_datetime
import datetime
m = EmailMessage()
m["From"] = "Rosa Quarry <rosa@example.com>"
m["To"] = "crew@example.com"
m["Subject"] = "Blasting schedule for the east bench"
m["Date"] = format_datetime(datetime.datetime(2026, 3, 9, 8, 30, tzinfo=datetime.timezone.utc))
m["Message-ID"] = "<schedule-1@example.com>"
m.set_content("Hello crew,\nthe detonators arrive on Thursday; keep clear of the east bench.\n")
with open("report.pdf", "rb") as f:
    m.add_attachment(f.read(), maintype="application", subtype="pdf", filename="report.pdf")
open("schedule.eml", "wb").write(bytes(m))
