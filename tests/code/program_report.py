# functions: get_weather,get_user,add
# A program as an LLM writes it: host calls in a loop, error handling per
# item, aggregation, a formatted report, JSON out.
import json
import math

cities = ["London", "Paris", "Atlantis", "Tokyo"]
report = {"ok": [], "failed": {}}
for city in cities:
    try:
        w = get_weather(city)
    except ValueError as e:
        report["failed"][city] = str(e)
        continue
    report["ok"].append({"city": city, "temp": w["temp_c"], "sky": w["sky"]})

temps = [r["temp"] for r in report["ok"]]
mean = sum(temps) / len(temps)
stdev = math.sqrt(sum((t - mean) ** 2 for t in temps) / len(temps))
warmest = max(report["ok"], key=lambda r: r["temp"])
lines = [f"{r['city']:<8} {r['temp']:>6.2f}°C  {r['sky']}" for r in sorted(report["ok"], key=lambda r: -r["temp"])]
print("\n".join(lines))
print(f"mean {mean:.3f}, stdev {stdev:.3f}, warmest {warmest['city']}")
owner = get_user(7)
summary = {
    "owner": owner["name"],
    "cities": len(report["ok"]),
    "failed": sorted(report["failed"]),
    "mean": round(mean, 2),
    "checksum": add(len(lines), 100),
}
json.dumps(summary, sort_keys=True)
# expect: '{"checksum": 103, "cities": 3, "failed": ["Atlantis"], "mean": 16.92, "owner": "user7"}'
