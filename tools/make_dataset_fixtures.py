#!/usr/bin/python3
"""Miniature dataset folders for the dataset readers (tests/cli/dataset_test.cpp).

Writes tests/data/datasets/<name>/, one folder per release, laid out as the release is
(docs/datasets.md), with tiny real JPEG / PNG images (8x8, Pillow) and the known quirks:

  fairface/               fairface_label_train.csv, fairface_label_val.csv with the header
                          file,age,gender,race,service_test and paths "train/1.jpg"; the
                          age group "more than 70"; a labelled image absent (train/6.jpg),
                          an image nobody labels (train/7.jpg), a macOS "._1.jpg" fork.
  utkface/                UTKFace/ (aligned faces, "...jpg.chip.jpg"), crop_part1/ and
                          part1/ (in-the-wild, ".jpg"); the release's three names with a
                          field missing (61_1_20170109142408075, 39_1_20170116174525125,
                          61_1_20170109150557335).
  causalface/             final_picked_{age,lighting,pose,smiling}/seed_N/ with the suffixes
                          _o2, _o2_corrected, _rm_bg / _o2_rm_bg and the lighting "_l_" /
                          "_lighting_" spellings; three names that are not the scheme.
  geode/                  index.csv (file_path,object,region,ip_country), images/OBJECT/...;
                          one row absent on disk, one image unlisted.
  dollarstreet/           images_v2.csv (the MLCommons columns, topics and the ImageNet
                          columns as JSON lists, several topics per image, a topic with an
                          apostrophe), assets/ID/ID.jpg; one row absent on disk, one image
                          unlisted.
  socialcounterfactuals/  two real metadata rows (metadata_race_gender.csv and
                          metadata_physical_gender.csv, MIT licence, Intel) and the images as
                          the generation script names them ({seed}_{k}.jpg in one folder per
                          prompt, with prompt.json and metadata.jsonl); one image of the first
                          set absent, one image unlisted.

The expected tables are written by hand in the test, not here.
Run: /usr/bin/python3 tools/make_dataset_fixtures.py
"""
import csv
import io
import json
import os
import shutil

from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "data", "datasets")
SC_SOURCE = "/work/shared/data/socialcounterfactuals"


def image(path, shade):
    """An 8x8 image of one colour: JPEG or PNG by the extension."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    img = Image.new("RGB", (8, 8), (shade % 256, (shade * 7) % 256, (shade * 13) % 256))
    if path.lower().endswith(".png"):
        img.save(path, format="PNG")
    else:
        img.save(path, format="JPEG", quality=75)


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def fairface(d):
    header = ["file", "age", "gender", "race", "service_test"]
    train = [["train/1.jpg", "50-59", "Male", "East Asian", "True"],
             ["train/2.jpg", "30-39", "Female", "Indian", "False"],
             ["train/3.jpg", "3-9", "Female", "Black", "False"],
             ["train/4.jpg", "20-29", "Female", "Indian", "True"],
             ["train/5.jpg", "more than 70", "Male", "Latino_Hispanic", "True"],
             ["train/6.jpg", "0-2", "Male", "White", "False"]]
    val = [["val/1.jpg", "3-9", "Male", "East Asian", "False"],
           ["val/2.jpg", "50-59", "Female", "Southeast Asian", "False"],
           ["val/3.jpg", "30-39", "Male", "Middle Eastern", "True"]]
    write_csv(os.path.join(d, "fairface_label_train.csv"), header, train)
    write_csv(os.path.join(d, "fairface_label_val.csv"), header, val)
    for i, row in enumerate(train[:5] + val):
        image(os.path.join(d, row[0]), i)
    image(os.path.join(d, "train", "7.jpg"), 40)
    with open(os.path.join(d, "train", "._1.jpg"), "wb") as f:  # AppleDouble fork
        f.write(b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        ")


def utkface(d):
    names = ["UTKFace/1_0_0_20161219140623097.jpg.chip.jpg",
             "UTKFace/26_1_3_20170119180355418.jpg.chip.jpg",
             "UTKFace/35_0_1_20170117194532155.jpg.chip.jpg",
             "UTKFace/80_1_2_20170110182418355.jpg.chip.jpg",
             "UTKFace/9_1_4_20161220222856346.jpg.chip.jpg",
             "UTKFace/61_1_20170109142408075.jpg.chip.jpg",
             "UTKFace/39_1_20170116174525125.jpg.chip.jpg",
             "UTKFace/61_1_20170109150557335.jpg.chip.jpg",
             "crop_part1/40_0_0_20170104204742093.jpg.chip.jpg",
             "part1/100_1_0_20170110183726390.jpg"]
    for i, name in enumerate(names):
        image(os.path.join(d, name), 60 + i)


def causalface(d):
    names = ["final_picked_age/seed_42/asian_female_age_0.8_o2.png",
             "final_picked_age/seed_42/asian_female_age_4.4_o2.png",
             "final_picked_age/seed_42/white_male_age_2.0_o2.png",
             "final_picked_age/seed_42/asian_female_age_0.8_o2_rm_bg.png",
             "final_picked_lighting/seed_7/black_male_l_-1.png",
             "final_picked_lighting/seed_7/black_male_lighting_3_o2_rm_bg.png",
             "final_picked_pose/seed_7/white_female_y_-1.5.png",
             "final_picked_pose/seed_7/white_female_y_0.0.png",
             "final_picked_smiling/seed_7/asian_male_smiling_-2.5_o2.png",
             "final_picked_smiling/seed_7/asian_male_smiling_-2.5_o2_corrected.png",
             # not the scheme: a factor in another factor's folder, no seed folder, a race
             # the release does not have
             "final_picked_pose/seed_7/white_female_age_0.8_o2.png",
             "final_picked_age/overview.png",
             "final_picked_age/seed_42/latino_female_age_0.8_o2.png"]
    for i, name in enumerate(names):
        image(os.path.join(d, name), 90 + i)


def geode(d):
    header = ["file_path", "object", "region", "ip_country"]
    rows = [["images/bag/bag_0001.jpg", "bag", "Africa", "Nigeria"],
            ["images/bag/bag_0002.jpg", "bag", "Europe", "Italy"],
            ["images/car/car_0001.jpg", "car", "Africa", "Nigeria"],
            ["images/car/car_0002.jpg", "car", "EastAsia", "China"],
            ["images/stove/stove_0001.jpg", "stove", "WestAsia", ""],
            ["images/stove/stove_0002.jpg", "stove", "Africa", "Kenya"]]
    write_csv(os.path.join(d, "index.csv"), header, rows)
    for i, row in enumerate(rows):
        if row[0] != "images/car/car_0002.jpg":  # absent on disk
            image(os.path.join(d, row[0]), 120 + i)
    image(os.path.join(d, "images", "bag", "bag_0003.jpg"), 130)  # unlisted


def dollarstreet(d):
    # The columns and JSON-encoded lists of the MLCommons CSVs (images_v2_imagenet_*.csv add
    # the ImageNet columns, ignored by the reader).
    header = ["id", "country.name", "country.id", "region.id", "imageRelPath", "topics", "place",
              "income", "imagenet_synonyms", "imagenet_sysnet_id"]
    ids = ["5d4be1d3cf0b3a0f3f362c4b", "5d4bde0acf0b3a0f3f3359fa", "5d4bf37acf0b3a0f3f399b06",
           "5d4bf2b8cf0b3a0f3f395eb2"]
    topics = [["kitchens", "stoves"], ["toys", "children's rooms"], ["family snapshots"],
              ["toilets"]]
    rows = []
    places = ["5d4be1cdcf0b3a0f3f362a0b", "5d4bddf3cf0b3a0f3f3354c9", "5d4bf370cf0b3a0f3f399a5d",
              "5d4bf2afcf0b3a0f3f395d2f"]
    countries = [("bi", "Burundi", "af", "27.84"), ("in", "India", "as", "1013.4"),
                 ("us", "United States", "am", "8710"), ("nl", "Netherlands", "eu", "3617")]
    for i in range(4):
        rows.append([ids[i], countries[i][1], countries[i][0], countries[i][2],
                     "assets/%s/%s.jpg" % (ids[i], ids[i]), json.dumps(topics[i]), places[i],
                     countries[i][3], json.dumps(["stove"]), json.dumps([706])])
    write_csv(os.path.join(d, "images_v2.csv"), header, rows)
    for i, row in enumerate(rows):
        if i != 3:  # the Netherlands toilet is absent on disk
            image(os.path.join(d, row[4]), 150 + i)
    image(os.path.join(d, "assets", "5d4bf1cbcf0b3a0f3f393f83", "5d4bf1cbcf0b3a0f3f393f83.jpg"),
          160)  # unlisted


def socialcounterfactuals(d):
    picks = [("metadata_race_gender.csv", "a_picture_of_race_gender_plumber", "0", "0000000",
              "5"),
             ("metadata_physical_gender.csv", "physical_gender_carpenter", "0", "0000001", None)]
    shade = 170
    for name, filename, rank, folder, absent in picks:
        with open(os.path.join(SC_SOURCE, name), newline="") as f:
            reader = csv.reader(f)
            header = next(reader)
            row = next(r for r in reader
                       if r[header.index("filename")] == filename and
                       r[header.index("rank")] == rank)
        write_csv(os.path.join(d, name), header, [row])
        seed = row[header.index("seed")]
        prompt_dir = os.path.join(d, folder)
        os.makedirs(prompt_dir, exist_ok=True)
        captions = {h[len("caption_"):]: v for h, v in zip(header, row)
                    if h.startswith("caption_")}
        for k in captions:
            if k != absent:
                image(os.path.join(prompt_dir, "%s_%s.jpg" % (seed, k)), shade)
                shade += 1
        with open(os.path.join(prompt_dir, "prompt.json"), "w") as f:
            json.dump({"filename": filename}, f)
        with open(os.path.join(prompt_dir, "metadata.jsonl"), "w") as f:
            f.write(json.dumps({"seed": int(seed), "filename": filename}) + "\n")
    image(os.path.join(d, "0000001", "12345_3.jpg"), 250)  # unlisted
    shutil.copyfile(os.path.join(SC_SOURCE, "LICENSE"), os.path.join(d, "LICENSE"))


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    for name, make in [("fairface", fairface), ("utkface", utkface),
                       ("causalface", causalface), ("geode", geode),
                       ("dollarstreet", dollarstreet),
                       ("socialcounterfactuals", socialcounterfactuals)]:
        d = os.path.join(OUT, name)
        os.makedirs(d)
        make(d)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
