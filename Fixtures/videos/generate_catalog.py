#!/usr/bin/env python3
"""Writes catalog.json: 200 fake videos for the mock video host and the reference API.

Deterministic (fixed seed), so regenerating never changes the committed file:

    python3 Fixtures/videos/generate_catalog.py [--out PATH]
"""
import argparse
import json
import os
import random

SEED = 20260101
COUNT = 200

CITIES = ["Lisbon", "Kyoto", "Zürich", "Reykjavík", "Oaxaca", "Tallinn", "Marseille", "Hanoi",
          "Cape Town", "Montréal", "Valparaíso", "Tbilisi", "Seoul", "Porto", "Edinburgh"]
DISHES = ["ramen", "sourdough", "paella", "pho", "shakshuka", "crème brûlée", "dumplings",
          "tacos al pastor", "risotto", "banana bread", "kimchi", "focaccia"]
GADGETS = ["mechanical keyboard", "mirrorless camera", "e-reader", "drone", "espresso grinder",
           "synth", "standing desk", "3D printer", "smartwatch", "turntable"]
SKILLS = ["solder", "sharpen a knife", "bake bread", "tie a bowline", "change a tire",
          "brew pour-over", "patch drywall", "read a topo map", "fold a fitted sheet",
          "set up a home server", "prune tomatoes", "juggle three balls"]
TOPICS = ["SQLite internals", "Swift concurrency", "HTTP caching", "color grading", "bird song",
          "sourdough science", "index funds", "bike maintenance", "type design", "urban foxes",
          "houseplant care", "chess openings", "film photography", "jazz harmony"]
TEAMS = ["Harbor FC", "North End", "Riverside", "The Owls", "Old Town", "Lakeside United",
         "Hillcrest", "Eastbank"]
MOODS = ["Rainy", "Quiet", "Golden hour", "Foggy", "Late-night", "Early morning", "Snowy", "Windy"]
PLACES = ["market", "harbor", "tram ride", "rooftop", "old town", "night train", "ferry", "riverside"]

TEMPLATES = [
    lambda r: f"How to {r.choice(SKILLS)} in {r.randint(2, 15)} minutes",
    lambda r: f"{r.choice(MOODS)} {r.choice(PLACES)} in {r.choice(CITIES)}",
    lambda r: f"Unboxing the new {r.choice(GADGETS)}",
    lambda r: f"{r.choice(GADGETS).capitalize()} review: {r.randint(1, 12)} months later",
    lambda r: f"Cooking {r.choice(DISHES)} from scratch",
    lambda r: "{} vs {} — highlights".format(*r.sample(TEAMS, 2)),
    lambda r: f"Lecture {r.randint(1, 24)}: {r.choice(TOPICS)}",
    lambda r: f"Live Q&A: {r.choice(TOPICS)}",
    lambda r: f"A day in {r.choice(CITIES)} (4K walking tour)",
    lambda r: f"Why {r.choice(TOPICS)} is harder than it looks",
    lambda r: f"{r.randint(3, 10)} mistakes everyone makes with {r.choice(DISHES)}",
    lambda r: f"Timelapse: {r.choice(MOODS).lower()} {r.choice(PLACES)}, {r.choice(CITIES)}",
    lambda r: f"Vlog #{r.randint(1, 300)} — back in {r.choice(CITIES)}",
    lambda r: f"Beginner's guide to {r.choice(TOPICS)}",
]


def make_catalog():
    rng = random.Random(SEED)
    seen, videos = set(), []
    while len(videos) < COUNT:
        title = rng.choice(TEMPLATES)(rng)
        if title in seen:
            continue
        seen.add(title)
        vid = f"vid-{len(videos) + 1:04d}"
        # Mostly short clips, some long lectures and tours.
        if rng.random() < 0.75:
            duration = round(rng.uniform(8, 600), 1)
        else:
            duration = round(rng.uniform(600, 5400), 1)
        bitrate = rng.choice([1_500_000, 3_000_000, 5_000_000, 8_000_000])  # bits per second
        videos.append({
            "id": vid,
            "title": title,
            "duration_seconds": duration,
            "stream_url": f"https://videos.example.com/{vid}/master.m3u8",
            "thumbnail_url": f"https://videos.example.com/{vid}/thumb.jpg",
            "size_bytes": int(duration * bitrate / 8 * rng.uniform(0.9, 1.1)),
        })
    return {"videos": videos}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "catalog.json"))
    args = parser.parse_args()
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(make_catalog(), f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
